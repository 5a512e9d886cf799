// GpuContext: the worker's one CUDA context (the device's primary context, current on the
// worker's only thread, shared with cuBLAS) and the stream every launch, copy and cuBLAS call
// goes to.
#pragma once

#include <cuda.h>

#include "CudaDriver.hpp"
#include "PrimaryContext.hpp"
#include "WorkerProtocol.hpp"

namespace gemmtune {

class GpuContext {
 public:
  // Throws NoGpuError without a driver, UsageError when `gpuIndex` is not a visible GPU.
  explicit GpuContext(int gpuIndex);
  ~GpuContext();
  GpuContext(const GpuContext&) = delete;
  GpuContext& operator=(const GpuContext&) = delete;

  const CudaDriver& cu() const { return cu_; }
  CUdevice device() const { return primary_.device(); }
  CUstream stream() const { return stream_; }
  int attribute(CUdevice_attribute a) const;
  // cuStreamSynchronize; a kernel's fault surfaces here as CudaError.
  void sync() const;
  // CUDA_SUCCESS while the context is usable; the sticky error once a kernel has poisoned it.
  CUresult health() const;
  WorkerInfo info() const;

 private:
  static int checkedIndex(int gpuIndex);
  const CudaDriver& cu_;
  int index_;
  PrimaryContext primary_;
  CUstream stream_ = nullptr;
};

}  // namespace gemmtune
