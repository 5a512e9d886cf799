// FaithfulCheck: the verification a `faithful` candidate (tensor cores at FP32 accuracy, issue 29)
// passes on top of every family's checks. On three data sets — uniform in [-0.5, 0.5) with full
// mantissas, standard normal, and wide exponents (rows of A and columns of B scaled by 2^k, k in
// [-60, 60]: a small part that underflows shows here) — the candidate's two error measures against
// an FP64 product of the same inputs (AccuracyKernels::errors) must be no larger than cuBLAS
// SGEMM's (default math) on the same inputs; and with NaN, +Inf and -Inf planted in A and B, every
// element of C must be finite, NaN, +Inf or -Inf exactly where cuBLAS SGEMM's is.
//
// Every launch is the problem's own layout, packed (the timing plan's problem), alpha = 1 over a
// zero C: the error is the product's. Built once per problem, on the first faithful candidate.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "AccuracyKernels.hpp"
#include "Cublas.hpp"
#include "DeviceBuffer.hpp"
#include "GpuContext.hpp"
#include "HelperKernels.hpp"
#include "WorkerProtocol.hpp"

namespace gemmtune {

// The error data sets' names, in the order every verdict lists them (gemm_bench's CSV columns too).
inline constexpr const char* kFaithfulSets[] = {"uniform", "normal", "wide exponents"};

struct SetFigures {
  std::string set;  // "uniform", "normal", "wide exponents"
  ErrorFigures candidate, cublas;
};

struct FaithfulVerdict {
  bool ok = true;
  std::vector<SetFigures> sets;
  std::string detail;  // every failure, "; "-separated, with the figures (empty when ok)
  // "faithful: uniform max 9.2e-08 F 4.5e-07 (cuBLAS 3.9e-07 1.6e-06); normal ...": the figures a row keeps.
  std::string summary() const;
};

class FaithfulData {
 public:
  // Throws UsageError when the data sets do not fit in free GPU memory.
  FaithfulData(const Problem& p, const GpuContext& gpu, const HelperKernels& k, const AccuracyKernels& acc,
               const Cublas& blas);

  // Runs `launch` (the problem's layout, packed) on every set and judges it against cuBLAS SGEMM.
  FaithfulVerdict judge(const std::function<void(const SgemmArgs&)>& launch) const;

 private:
  struct Set {
    std::string name;
    DeviceBuffer A, B;            // the logical inputs, packed (A M×K, B K×N per batch)
    DeviceBuffer storedA, storedB;  // as the layout stores them, where op T transposes
    DeviceBuffer ref, absAB;      // FP64 (empty for the Inf/NaN set)
    ErrorFigures cublas;
  };
  Set makeSet(const std::string& name, const std::function<void(Set&)>& fill) const;
  SgemmArgs argsFor(const Set& s) const;
  void plantSpecials(Set& s) const;
  // Zeroes C, enqueues `launch` on the set and waits for it.
  void run(const Set& s, const std::function<void(const SgemmArgs&)>& launch) const;

  Problem problem_;
  const GpuContext& gpu_;
  const HelperKernels& k_;
  const AccuracyKernels& acc_;
  long long aElems_, bElems_, cElems_;
  std::vector<Set> sets_;  // uniform, normal, wide exponents
  Set specials_;           // uniform with NaN and ±Inf planted
  DeviceBuffer C_, cublasSpecials_;
};

}  // namespace gemmtune
