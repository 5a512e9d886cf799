// CandidateKernel: one candidate's cubin loaded (a LoadedKernel), and the launch plans it runs
// (timing's and each verification layout's), every launch of a plan checked against the GPU's and
// the kernel's limits before the plan's first run — decided from attributes and error codes,
// never from message text.
#pragma once

#include <cuda.h>

#include <memory>
#include <stdexcept>
#include <string>

#include <vector>

#include "LaunchPlan.hpp"
#include "LoadedKernel.hpp"
#include "Workspace.hpp"

namespace gemmtune {

// The kernel cannot be launched as requested: bad image, missing entry point or a limit exceeded.
// `result` is CUDA_SUCCESS when a limit check refused it rather than the driver.
struct LaunchRefused : std::runtime_error {
  LaunchRefused(CUresult r, const std::string& m) : std::runtime_error(m), result(r) {}
  CUresult result;
};

class CandidateKernel {
 public:
  // Throws LaunchRefused.
  CandidateKernel(const std::string& cubin, const std::vector<std::string>& loweredNames, CUdevice device);

  // Throws LaunchRefused when `plan` refuses its problem or a launch of it exceeds a limit.
  void admit(const LaunchPlan& plan) const;
  // Enqueues the launches of `plan` (admitted before) for `a`, with the plan's workspace (this
  // candidate's own, zeroed when allocated). Throws LaunchRefused when the driver refuses one
  // (which may also be a sticky error of an earlier launch surfacing).
  void launch(CUstream stream, const LaunchPlan& plan, const SgemmArgs& a);

 private:
  std::unique_ptr<LoadedKernel> kernel_;
  std::size_t kernelCount_;
  CUdevice device_;
  Workspace workspace_;
};

}  // namespace gemmtune
