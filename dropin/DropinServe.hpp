// DropinServe: one intercepted cuBLAS GEMM call, and whether gemmtune computes it. A call is served
// only when it is well formed, the policy allows it, the handle asks for plain FP32 with host
// scalars and the library runs it (Status::ok); the entry point forwards every other call to the
// real cuBLAS unchanged, so its status is cuBLAS's own.
#pragma once

#include <cublas_v2.h>

#include <optional>

namespace gemmtune::dropin {

// An SGEMM-shaped call as cuBLAS received it (column-major; scalars still pointers).
struct CublasCall {
  cublasOperation_t transa = CUBLAS_OP_N, transb = CUBLAS_OP_N;
  int m = 0, n = 0, k = 0;
  const void* alpha = nullptr;
  const void* beta = nullptr;
  const void* a = nullptr;
  int lda = 0;
  const void* b = nullptr;
  int ldb = 0;
  void* c = nullptr;
  int ldc = 0;
  enum class Form { single, strided, arrays } form = Form::single;
  long long strideA = 0, strideB = 0, strideC = 0;  // Form::strided
  const void* const* arrayA = nullptr;               // Form::arrays (device memory)
  const void* const* arrayB = nullptr;
  void* const* arrayC = nullptr;
  int batch = 1;
  // cublasGemm*Ex only (the S entry points are FP32 by name).
  bool ex = false;
  cudaDataType aType = CUDA_R_32F, bType = CUDA_R_32F, cType = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  cublasGemmAlgo_t algo = CUBLAS_GEMM_DEFAULT;
};

// Counts and records `call` and computes it when it may (above). The status to return when the
// drop-in computed it (CUBLAS_STATUS_SUCCESS), or when forwarding could apply beta twice (a call of
// several launches failed after the first: CUBLAS_STATUS_EXECUTION_FAILED); nothing when the call
// goes to cuBLAS. Never throws.
std::optional<cublasStatus_t> serve(cublasHandle_t handle, const CublasCall& call) noexcept;

}  // namespace gemmtune::dropin
