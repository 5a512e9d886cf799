// A stand-in for cuBLAS in the drop-in's CPU tests: the handle functions and the six GEMM entry
// points, with cuBLAS's own signatures (its header). A GEMM touches no memory: it appends one line
// naming its arguments to a log (fakeCublasLog) and returns CUBLAS_STATUS_INVALID_VALUE for a
// negative dimension, else CUBLAS_STATUS_SUCCESS, so a test sees exactly what was forwarded.
#include <cublas_v2.h>

#include <cstdio>
#include <mutex>
#include <string>

namespace {

struct FakeHandle {
  cudaStream_t stream = nullptr;
  cublasMath_t math = CUBLAS_DEFAULT_MATH;
  cublasPointerMode_t pointer = CUBLAS_POINTER_MODE_HOST;
};

std::mutex logMutex;
std::string callLog;

FakeHandle* fake(cublasHandle_t h) { return reinterpret_cast<FakeHandle*>(h); }

cublasStatus_t logged(const char* entry, int m, int n, int k, const std::string& rest) {
  char line[256];
  std::snprintf(line, sizeof line, "%s m=%d n=%d k=%d %s\n", entry, m, n, k, rest.c_str());
  std::lock_guard lock(logMutex);
  callLog += line;
  return m < 0 || n < 0 || k < 0 ? CUBLAS_STATUS_INVALID_VALUE : CUBLAS_STATUS_SUCCESS;
}

std::string ops(cublasOperation_t a, cublasOperation_t b, int lda, int ldb, int ldc) {
  return "ops=" + std::to_string(a) + std::to_string(b) + " ld=" + std::to_string(lda) + "," + std::to_string(ldb) +
         "," + std::to_string(ldc);
}

}  // namespace

extern "C" {

const char* fakeCublasLog() { return callLog.c_str(); }

cublasStatus_t CUBLASWINAPI cublasCreate_v2(cublasHandle_t* handle) {
  *handle = reinterpret_cast<cublasHandle_t>(new FakeHandle);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t CUBLASWINAPI cublasDestroy_v2(cublasHandle_t handle) {
  delete fake(handle);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t CUBLASWINAPI cublasGetStream_v2(cublasHandle_t handle, cudaStream_t* stream) {
  *stream = fake(handle)->stream;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t CUBLASWINAPI cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  fake(handle)->math = mode;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t CUBLASWINAPI cublasGetMathMode(cublasHandle_t handle, cublasMath_t* mode) {
  *mode = fake(handle)->math;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t CUBLASWINAPI cublasSetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t mode) {
  fake(handle)->pointer = mode;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t CUBLASWINAPI cublasGetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t* mode) {
  *mode = fake(handle)->pointer;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasSgemm_v2(cublasHandle_t, cublasOperation_t transa, cublasOperation_t transb, int m,
                                           int n, int k, const float*, const float*, int lda, const float*, int ldb,
                                           const float*, float*, int ldc) {
  return logged("cublasSgemm_v2", m, n, k, ops(transa, transb, lda, ldb, ldc));
}
cublasStatus_t CUBLASWINAPI cublasSgemmStridedBatched(cublasHandle_t, cublasOperation_t transa,
                                                      cublasOperation_t transb, int m, int n, int k, const float*,
                                                      const float*, int lda, long long int strideA, const float*,
                                                      int ldb, long long int strideB, const float*, float*, int ldc,
                                                      long long int strideC, int batchCount) {
  return logged("cublasSgemmStridedBatched", m, n, k,
                ops(transa, transb, lda, ldb, ldc) + " strides=" + std::to_string(strideA) + "," +
                    std::to_string(strideB) + "," + std::to_string(strideC) + " batch=" + std::to_string(batchCount));
}
cublasStatus_t CUBLASWINAPI cublasSgemmBatched(cublasHandle_t, cublasOperation_t transa, cublasOperation_t transb,
                                               int m, int n, int k, const float*, const float* const[], int lda,
                                               const float* const[], int ldb, const float*, float* const[], int ldc,
                                               int batchCount) {
  return logged("cublasSgemmBatched", m, n, k, ops(transa, transb, lda, ldb, ldc) + " batch=" + std::to_string(batchCount));
}
cublasStatus_t CUBLASWINAPI cublasGemmEx(cublasHandle_t, cublasOperation_t transa, cublasOperation_t transb, int m,
                                         int n, int k, const void*, const void*, cudaDataType Atype, int lda,
                                         const void*, cudaDataType, int ldb, const void*, void*, cudaDataType, int ldc,
                                         cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  return logged("cublasGemmEx", m, n, k,
                ops(transa, transb, lda, ldb, ldc) + " type=" + std::to_string(Atype) + " compute=" +
                    std::to_string(computeType) + " algo=" + std::to_string(algo));
}
cublasStatus_t CUBLASWINAPI cublasGemmStridedBatchedEx(cublasHandle_t, cublasOperation_t transa,
                                                       cublasOperation_t transb, int m, int n, int k, const void*,
                                                       const void*, cudaDataType Atype, int lda, long long int,
                                                       const void*, cudaDataType, int ldb, long long int, const void*,
                                                       void*, cudaDataType, int ldc, long long int, int batchCount,
                                                       cublasComputeType_t computeType, cublasGemmAlgo_t) {
  return logged("cublasGemmStridedBatchedEx", m, n, k,
                ops(transa, transb, lda, ldb, ldc) + " type=" + std::to_string(Atype) + " compute=" +
                    std::to_string(computeType) + " batch=" + std::to_string(batchCount));
}
cublasStatus_t CUBLASWINAPI cublasGemmBatchedEx(cublasHandle_t, cublasOperation_t transa, cublasOperation_t transb,
                                                int m, int n, int k, const void*, const void* const[],
                                                cudaDataType Atype, int lda, const void* const[], cudaDataType,
                                                int ldb, const void*, void* const[], cudaDataType, int ldc,
                                                int batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t) {
  return logged("cublasGemmBatchedEx", m, n, k,
                ops(transa, transb, lda, ldb, ldc) + " type=" + std::to_string(Atype) + " compute=" +
                    std::to_string(computeType) + " batch=" + std::to_string(batchCount));
}

}  // extern "C"
