// KernelLauncher: a compiled candidate loaded into the current CUDA context and launched with the
// contract every gemmtune template shares:
//   kernel(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
//          float beta, float* C, int ldc), grid from the family's rule, BM... threads per block,
//          the family's dynamic shared memory.
// Load failures throw CudaError (code kept); launches return the CUresult so the caller decides
// by code whether it was a launch error or a fault.
#pragma once

#include "CudaDriver.hpp"

#include <cuda.h>

#include <string>

#include "Family.hpp"

namespace gemmtune {

struct SgemmArgs {
  int m = 0, n = 0, k = 0;
  float alpha = 1.0f;
  CUdeviceptr a = 0;
  int lda = 0;
  CUdeviceptr b = 0;
  int ldb = 0;
  float beta = 0.0f;
  CUdeviceptr c = 0;
  int ldc = 0;
};

class LoadedKernel {
 public:
  // Loads `cubin` (needs a current context), resolves `loweredName`, and opts in to
  // `dynamicSmemBytes` of dynamic shared memory when it exceeds the function's default limit.
  // `driver` is kept for unloading: a kernel owned by a static object may outlive
  // CudaDriver::get()'s instance at process exit, so such owners pass their own driver copy.
  LoadedKernel(const std::string& cubin, const std::string& loweredName, int dynamicSmemBytes,
               const CudaDriver& driver = CudaDriver::get());
  ~LoadedKernel();
  LoadedKernel(const LoadedKernel&) = delete;
  LoadedKernel& operator=(const LoadedKernel&) = delete;

  CUfunction function() const { return function_; }
  int dynamicSmemBytes() const { return dynamicSmemBytes_; }
  int attribute(CUfunction_attribute which) const;  // throws CudaError
  // Resident blocks per SM as the driver computes them for this function.
  int driverBlocksPerSm(int threadsPerBlock) const;

  CUresult launch(Dim3 grid, int threadsPerBlock, void** params, CUstream stream = nullptr) const;
  // One SGEMM with the template contract; grid and block from `config`'s family.
  CUresult launchSgemm(const Config& config, const SgemmArgs& args, CUstream stream = nullptr) const;

 private:
  const CudaDriver& driver_;
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
  int dynamicSmemBytes_ = 0;
};

}  // namespace gemmtune
