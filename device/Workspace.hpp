// Workspace: the zeroed device memory a launch plan asks for (LaunchPlan::workspaceBytes: split-K
// locks), allocated on first need, grown on demand and reused. A plan's every completed run leaves
// its workspace zeroed again (the plan contract), so memory is cleared only when allocated, on the
// stream that will use it. Launches that may run at the same time must not share one: keep one per
// stream. Thread-safe (threads may launch on one stream).
#pragma once

#include <cuda.h>

#include <mutex>
#include <vector>

namespace gemmtune {

class CudaDriver;

class Workspace {
 public:
  explicit Workspace(const CudaDriver& driver) : driver_(driver) {}
  ~Workspace();
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  // At least `bytes` of zeroed memory in the current context, queued behind `stream`'s earlier
  // work, into `ptr` (0 when `bytes` is 0); the driver's error (CUDA_ERROR_OUT_OF_MEMORY, ...)
  // otherwise. LoadedKernel::run reserves a plan's workspace through it.
  CUresult reserve(long long bytes, CUstream stream, CUdeviceptr& ptr);

 private:
  const CudaDriver& driver_;
  std::mutex mutex_;
  CUdeviceptr current_ = 0;
  long long bytes_ = 0;
  // Outgrown allocations: launches queued earlier on the stream may still use them, and freeing
  // would not wait for those. Freed with this object.
  std::vector<CUdeviceptr> retired_;
};

}  // namespace gemmtune
