// RelaxedCaptureMode: for its lifetime, the calling thread may make calls that a CUDA graph capture
// in global mode forbids (allocations, module loads) without invalidating a capture that another
// thread, or another stream of this one, has under way. Frameworks capture in global mode
// (PyTorch's default), and the library prepares new shapes (NVRTC, module loads, workspaces, cuBLAS
// handles) whenever a first call comes: those never belong to the capture. Work enqueued on a
// stream that is itself capturing is another matter: the library declines that (Dispatcher).
#pragma once

#include <cuda.h>

namespace gemmtune {

class CudaDriver;

class RelaxedCaptureMode {
 public:
  explicit RelaxedCaptureMode(const CudaDriver& driver);
  ~RelaxedCaptureMode();  // the thread's previous mode
  RelaxedCaptureMode(const RelaxedCaptureMode&) = delete;
  RelaxedCaptureMode& operator=(const RelaxedCaptureMode&) = delete;

 private:
  const CudaDriver& driver_;
  CUstreamCaptureMode previous_ = CU_STREAM_CAPTURE_MODE_RELAXED;
  bool exchanged_ = false;
};

}  // namespace gemmtune
