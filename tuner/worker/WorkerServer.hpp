// WorkerServer: what the worker process does for each request — owns the CUDA context, cuBLAS,
// the helper kernels and the current problem's buffers. Runs on the worker's only thread.
//
// Error contract: CudaError escaping a method means the context may be poisoned (the caller
// replies fatal and exits); LaunchRefused never escapes (it becomes `launch_error` while the
// context is healthy); gemmtune::Error means the request was refused and the worker is fine.
#pragma once

#include <functional>
#include <memory>

#include "AccuracyKernels.hpp"
#include "Cublas.hpp"
#include "FaithfulCheck.hpp"
#include "GpuContext.hpp"
#include "HelperKernels.hpp"
#include "LaunchGate.hpp"
#include "ProblemData.hpp"
#include "SmClock.hpp"
#include "WorkerProtocol.hpp"

namespace gemmtune {

class WorkerServer {
 public:
  // Throws NoGpuError / UsageError / UnavailableError (cuBLAS) with one actionable line.
  explicit WorkerServer(int gpuIndex);

  const WorkerInfo& info() const { return info_; }
  const GpuContext& gpu() const { return gpu_; }

  void setProblem(const Problem& p);
  CandidateResult runCandidate(const CandidateRequest& req);
  // cuBLAS (default math) timed on the problem; with `verifyFirst`, checked first as a candidate is
  // (wrong_result then, still timed). With `algo`, through cuBLASLt with that configuration, and
  // cuBLAS's own call wherever cuBLASLt refuses it for a verification layout (as the library does).
  CandidateResult runCublas(const TimingPolicy& policy, bool verifyFirst, const CublasLtAlgo* algo = nullptr);
  // cuBLASLt's configurations for the problem: every one listed timed briefly (the heuristic's
  // first, cuBLAS's own choice, among them) within CublasLtPick::kScreenMs of GPU time, then the fastest
  // kFinalists, distinct but for the custom option (fastestDistinct), verified and timed under `policy`
  // (runCublas with the configuration).
  CublasLtPick searchCublasLt(const TimingPolicy& policy);
  // About 280 configurations at 1024³ use each algorithm's default kernel; its variants (custom
  // options) come after them in the list.
  static constexpr std::size_t kLtListLimit = 1200;
  // A tiny SGEMM by a built-in kernel, checked exactly against cuBLAS: "ok" or "wrong_result".
  CandidateResult canary();

 private:
  const ProblemData& data() const;
  // LaunchRefused -> launch_error while the context is healthy; CudaError with the sticky code
  // otherwise.
  CandidateResult refused(const std::string& what) const;
  void addTiming(CandidateResult& r, const TimingPolicy& policy, const std::function<void(int)>& launch) const;
  // `args` through cuBLASLt with `algo`, or cuBLAS's own call where cuBLASLt refuses it.
  void ltOrDefault(const CublasLtAlgo& algo, const SgemmArgs& args);
  // The current problem's faithful data sets, built (and the accuracy kernels compiled) on first use.
  const FaithfulData& faithfulData();

  GpuContext gpu_;
  Cublas blas_;
  HelperKernels kernels_;
  mutable LaunchGate gate_;  // timing changes nothing a const member promises: only the gate's ticket
  SmClock clock_;
  WorkerInfo info_;
  std::unique_ptr<ProblemData> data_;
  std::unique_ptr<AccuracyKernels> accuracy_;
  std::unique_ptr<FaithfulData> faithful_;
};

}  // namespace gemmtune
