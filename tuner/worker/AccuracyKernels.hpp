// AccuracyKernels: the worker's kernels for the faithful precision class (issue 29) — the error
// data sets (uniform with full mantissas, wide exponents), an FP64 reference GEMM with its |A||B|,
// and the two error measures (the Inf/NaN class comparison is HelperKernels::classMismatch). Compiled with NVRTC the first time a
// faithful candidate needs them, so a strict run pays nothing.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string>

#include "DeviceBuffer.hpp"

namespace gemmtune {

// A result's error against the FP64 product of the same inputs, as issue 29 measures it.
struct ErrorFigures {
  double maxRelative = 0;  // max_ij |C - C64| / (|A||B|)_ij; +inf where C is NaN/Inf and C64 is not
  double frobenius = 0;    // ||C - C64||_F / ||C64||_F
};

class AccuracyKernels {
 public:
  static const std::string& source();
  static const char* anchorKernel();

  // Compiles for `arch` ("sm_90") and loads the module into the current context.
  AccuracyKernels(const std::string& arch, CUstream stream, int smCount);
  ~AccuracyKernels();
  AccuracyKernels(const AccuracyKernels&) = delete;
  AccuracyKernels& operator=(const AccuracyKernels&) = delete;

  // Uniform in [-0.5, 0.5), drawn in double and rounded once: full 24-bit mantissas at every magnitude.
  void fillUniform(CUdeviceptr p, long long n, std::uint32_t seed) const;
  // `count` packed rows × cols matrices: every row (byRow) or column scaled by 2^k, k uniform in
  // [-60, 60], drawn per line from `seed`.
  void scaleLines(CUdeviceptr p, long long count, long long rows, long long cols, bool byRow, std::uint32_t seed) const;
  // C64 = A·B and absAB = |A||B| in FP64 for `batch` packed row-major products (A M×K, B K×N).
  void referenceF64(CUdeviceptr A, CUdeviceptr B, CUdeviceptr C64, CUdeviceptr absAB, long long M, long long N,
                    long long K, long long batch) const;
  // The two measures of the packed float result C (n elements) against C64 and absAB. Synchronizes.
  ErrorFigures errors(CUdeviceptr C, CUdeviceptr C64, CUdeviceptr absAB, long long n) const;

 private:
  void launch(CUfunction f, long long n, void** args) const;
  CUstream stream_;
  int smCount_;
  CUmodule module_ = nullptr;
  CUfunction fillUniform_ = nullptr, scaleLines_ = nullptr, reference_ = nullptr, errors_ = nullptr;
  DeviceBuffer partials_;  // ak_errors' partial sums, three per block
};

}  // namespace gemmtune
