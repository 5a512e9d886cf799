// CudaDriver: the CUDA driver API, loaded at run time with dlopen("libcuda.so.1") and resolved
// through cuGetProcAddress, so gemmtune starts (and all CPU features work) on machines without a
// driver or GPU. Never link libcuda directly.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#include <stdexcept>
#include <string>

namespace gemmtune {

// X-macro of every driver entry point gemmtune uses: X(name, abi). `abi` pins the ABI version
// asked of cuGetProcAddress and the matching PFN_<name>_v<abi> type from cudaTypedefs.h. Asking
// for "the current version" instead is wrong: CUDA 13 added cuCtxSynchronize_v13000, which takes
// a context argument, while cuda.h still declares the argument-less one.
#define GEMMTUNE_CUDA_DRIVER_FUNCTIONS(X)                                                         \
  X(cuInit, 2000) X(cuDriverGetVersion, 2020) X(cuDeviceGetCount, 2000) X(cuDeviceGet, 2000)      \
  X(cuDeviceGetName, 2000) X(cuDeviceGetAttribute, 2000) X(cuDeviceTotalMem, 3020)                \
  X(cuDeviceGetUuid, 11040) X(cuDevicePrimaryCtxRetain, 7000) X(cuDevicePrimaryCtxRelease, 11000) \
  X(cuCtxSetCurrent, 4000) X(cuCtxSynchronize, 2000) X(cuCtxGetLimit, 3010)                       \
  X(cuModuleLoadData, 2000) X(cuModuleUnload, 2000) X(cuModuleGetFunction, 2000)                  \
  X(cuFuncGetAttribute, 2020) X(cuFuncSetAttribute, 9000) X(cuLaunchKernel, 4000)                 \
  X(cuMemAlloc, 3020) X(cuMemFree, 3020) X(cuMemcpyHtoD, 3020) X(cuMemcpyDtoH, 3020)              \
  X(cuMemcpyDtoD, 3020) X(cuMemsetD32, 3020) X(cuMemsetD8, 3020) X(cuMemGetInfo, 3020)            \
  X(cuMemsetD32Async, 3020) X(cuMemHostAlloc, 2020) X(cuMemFreeHost, 2000)                          \
  X(cuMemHostGetDevicePointer, 3020)                                                              \
  X(cuStreamCreate, 2000) X(cuStreamDestroy, 4000) X(cuStreamSynchronize, 2000)                   \
  X(cuStreamIsCapturing, 10000) X(cuStreamBeginCapture, 10010) X(cuStreamEndCapture, 10000)      \
  X(cuGraphInstantiateWithFlags, 11040) X(cuGraphLaunch, 10000) X(cuGraphDestroy, 10000)          \
  X(cuGraphExecDestroy, 10000) X(cuThreadExchangeStreamCaptureMode, 10010)                        \
  X(cuEventCreate, 2000) X(cuEventRecord, 2000) X(cuEventSynchronize, 2000) X(cuEventQuery, 2000)  \
  X(cuEventElapsedTime, 12080) X(cuEventDestroy, 4000)                                            \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor, 6050) X(cuGetErrorName, 6000)                    \
  X(cuGetErrorString, 6000) X(cuDeviceGetPCIBusId, 4010)                                          \
  X(cuCtxGetCurrent, 4000) X(cuCtxGetDevice, 2000) X(cuCtxGetId, 12000) X(cuStreamGetCtx, 9020)

class CudaDriver {
 public:
  // The process-wide driver, loaded and cuInit()-ed on first use. Throws NoGpuError ("no CUDA
  // driver: libcuda.so.1 not found", "no CUDA GPU: cuInit failed: ...") when unusable.
  static const CudaDriver& get();
  // True when get() would succeed; never throws.
  static bool available();

#define GEMMTUNE_DECLARE(name, abi) PFN_##name##_v##abi name = nullptr;
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
