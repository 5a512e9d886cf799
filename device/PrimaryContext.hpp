// PrimaryContext: the device's primary CUDA context, retained and made current for the life of
// the object (what the runtime API would use, so cuBLAS and our kernels share it).
#pragma once

#include <cuda.h>

namespace gemmtune {

class PrimaryContext {
 public:
  // Throws NoGpuError without a driver, CudaError when the device cannot be used.
  explicit PrimaryContext(int ordinal);
  ~PrimaryContext();
  PrimaryContext(const PrimaryContext&) = delete;
  PrimaryContext& operator=(const PrimaryContext&) = delete;

  CUdevice device() const { return device_; }
  CUcontext context() const { return context_; }

 private:
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
};

}  // namespace gemmtune
