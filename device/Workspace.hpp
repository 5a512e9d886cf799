// Workspace: the device memory a launch plan asks for (LaunchPlan::workspaceBytes), allocated on
// first need, grown on demand and reused. Its first kZeroedWorkspaceBytes are zeroed when allocated
// and every plan that uses them (split-K locks) leaves them zeroed again (the plan contract), so
// they are cleared only when allocated, on the stream that will use them; past them lies scratch
// (fp16x3's split operands), never cleared. Launches that may run at the same time must not share
// one: keep one per stream. Thread-safe (threads may launch on one stream).
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

  // At least `bytes` of memory in the current context (its zeroed prefix as above), queued behind
  // `stream`'s earlier work, into `ptr` (0 when `bytes` is 0); the driver's error
  // (CUDA_ERROR_OUT_OF_MEMORY, ...) otherwise. LoadedKernel::run reserves a plan's workspace
  // through it.
  CUresult reserve(long long bytes, CUstream stream, CUdeviceptr& ptr);

 private:
  // An outgrown allocation: launches queued before the growth may still use it, so it is freed
  // once `done` (recorded on the stream at the growth) has completed, checked at each reserve; a
  // growth during stream capture records nothing (done null), and that one goes with this object.
  struct Retired {
    CUdeviceptr ptr = 0;
    CUevent done = nullptr;
  };
  void freeFinished();
  CUresult retireCurrent(CUstream stream);

  const CudaDriver& driver_;
  std::mutex mutex_;
  CUdeviceptr current_ = 0;
  long long bytes_ = 0;
  std::vector<Retired> retired_;
};

}  // namespace gemmtune
