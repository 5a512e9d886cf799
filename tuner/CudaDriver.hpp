// CudaDriver: the CUDA driver API, loaded at run time with dlopen("libcuda.so.1") and resolved
// through cuGetProcAddress, so gemmtune starts (and all CPU features work) on machines without a
// driver or GPU. Never link libcuda directly.
#pragma once

#include <cuda.h>

#include <stdexcept>
#include <string>

namespace gemmtune {

// X-macro of every driver entry point gemmtune uses: X(name). Types come from cuda.h, whose
// macros map each name to its current versioned symbol (cuMemAlloc -> cuMemAlloc_v2).
#define GEMMTUNE_CUDA_DRIVER_FUNCTIONS(X)                                                     \
  X(cuInit) X(cuDriverGetVersion) X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName)       \
  X(cuDeviceGetAttribute) X(cuDeviceTotalMem) X(cuDeviceGetUuid) X(cuDevicePrimaryCtxRetain)  \
  X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent) X(cuCtxSynchronize) X(cuCtxGetLimit)        \
  X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction) X(cuFuncGetAttribute)          \
  X(cuFuncSetAttribute) X(cuLaunchKernel) X(cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoD)          \
  X(cuMemcpyDtoH) X(cuMemcpyDtoD) X(cuMemsetD32) X(cuMemsetD8) X(cuMemGetInfo)                \
  X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize) X(cuEventCreate)                \
  X(cuEventRecord) X(cuEventSynchronize) X(cuEventElapsedTime) X(cuEventDestroy)              \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor) X(cuGetErrorName) X(cuGetErrorString) \
  X(cuDeviceGetPCIBusId)

class CudaDriver {
 public:
  // The process-wide driver, loaded and cuInit()-ed on first use. Throws NoGpuError ("no CUDA
  // driver: libcuda.so.1 not found", "no CUDA GPU: cuInit failed: ...") when unusable.
  static const CudaDriver& get();
  // True when get() would succeed; never throws.
  static bool available();

#define GEMMTUNE_DECLARE(name) decltype(&::name) name = nullptr;
  GEMMTUNE_CUDA_DRIVER_FUNCTIONS(GEMMTUNE_DECLARE)
#undef GEMMTUNE_DECLARE

  // "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered"
  std::string describe(CUresult r) const;
  // Throws std::runtime_error("<what>: <describe(r)>") unless r == CUDA_SUCCESS.
  void check(CUresult r, const char* what) const;
  int version() const { return version_; }  // e.g. 13000

 private:
  CudaDriver();
  int version_ = 0;
};

// Thrown by CudaDriver::check: keeps the CUresult so callers decide by code, never by text.
struct CudaError : std::runtime_error {
  CudaError(CUresult r, const std::string& m) : std::runtime_error(m), result(r) {}
  CUresult result;
};

}  // namespace gemmtune
