// CandidateKernel: one candidate's cubin loaded (through KernelLauncher's LoadedKernel) and
// checked against the GPU's and the kernel's launch limits before its first launch — decided
// from attributes and error codes, never from message text.
#pragma once

#include <cuda.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "Family.hpp"
#include "KernelLauncher.hpp"

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
  CandidateKernel(const std::string& cubin, const std::string& loweredName, Dim3 grid, Dim3 block, int dynamicSmemBytes,
                  CUdevice device);

  // Enqueues one launch with the template contract's arguments. Throws LaunchRefused when the
  // driver refuses it (which may also be a sticky error of an earlier launch surfacing).
  void launch(CUstream stream, SgemmArgs a) const;

 private:
  std::unique_ptr<LoadedKernel> kernel_;
  Dim3 grid_, block_;
};

}  // namespace gemmtune
