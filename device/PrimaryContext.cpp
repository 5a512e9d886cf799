#include "PrimaryContext.hpp"

#include "CudaDriver.hpp"

namespace gemmtune {

PrimaryContext::PrimaryContext(int ordinal) {
  const CudaDriver& d = CudaDriver::get();
  d.check(d.cuDeviceGet(&device_, ordinal), "cuDeviceGet");
  d.check(d.cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
  if (CUresult r = d.cuCtxSetCurrent(context_); r != CUDA_SUCCESS) {
    d.cuDevicePrimaryCtxRelease(device_);
    d.check(r, "cuCtxSetCurrent");
  }
}

PrimaryContext::~PrimaryContext() {
  // Release errors (a context poisoned by a fault) are not actionable here; the process that
  // hit the fault is about to be replaced anyway.
  const CudaDriver& d = CudaDriver::get();
  d.cuCtxSetCurrent(nullptr);
  d.cuDevicePrimaryCtxRelease(device_);
}

}  // namespace gemmtune
