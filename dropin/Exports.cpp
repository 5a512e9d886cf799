// The cuBLAS entry points libgemmtune_cublas.so defines (their declarations
// come from cuBLAS's own header, so the signatures cannot drift): each
// describes its call, lets DropinServe compute it when it may, and otherwise
// forwards the call unchanged to the real cuBLAS (RealCublas).
#include <cublas_v2.h>

#include "DropinServe.hpp"
#include "RealCublas.hpp"

using gemmtune::dropin::CublasCall;
using gemmtune::dropin::noRealCublas;
using gemmtune::dropin::realCublas;
using gemmtune::dropin::serve;

namespace {

CublasCall callOf(cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k, const void* alpha,
                  const void* a, int lda, const void* b, int ldb, const void* beta, void* c, int ldc) {
  CublasCall call;
  call.transa = transa, call.transb = transb;
  call.m = m, call.n = n, call.k = k;
  call.alpha = alpha, call.beta = beta;
  call.a = a, call.lda = lda, call.b = b, call.ldb = ldb, call.c = c, call.ldc = ldc;
  return call;
}

CublasCall strided(CublasCall call, long long strideA, long long strideB, long long strideC, int batch) {
  call.form = CublasCall::Form::strided;
  call.strideA = strideA, call.strideB = strideB, call.strideC = strideC;
  call.batch = batch;
  return call;
}

CublasCall arrays(CublasCall call, const void* const a[], const void* const b[], void* const c[], int batch) {
  call.form = CublasCall::Form::arrays;
  call.arrayA = a, call.arrayB = b, call.arrayC = c;
  call.batch = batch;
  return call;
}

CublasCall typed(CublasCall call, cudaDataType aType, cudaDataType bType, cudaDataType cType,
                 cublasComputeType_t compute, cublasGemmAlgo_t algo) {
  call.ex = true;
  call.aType = aType, call.bType = bType, call.cType = cType, call.compute = compute, call.algo = algo;
  return call;
}

}  // namespace

extern "C" {

cublasStatus_t CUBLASWINAPI cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                           int m, int n, int k, const float* alpha, const float* A, int lda,
                                           const float* B, int ldb, const float* beta, float* C, int ldc) {
  if (auto status = serve(handle, callOf(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc))) return *status;
  const auto f = realCublas().sgemm;
  return f ? f(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc) : noRealCublas("cublasSgemm_v2");
}

cublasStatus_t CUBLASWINAPI cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                                      cublasOperation_t transb, int m, int n, int k, const float* alpha,
                                                      const float* A, int lda, long long int strideA, const float* B,
                                                      int ldb, long long int strideB, const float* beta, float* C,
                                                      int ldc, long long int strideC, int batchCount) {
  if (auto status = serve(handle, strided(callOf(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc), strideA,
                                          strideB, strideC, batchCount)))
    return *status;
  const auto f = realCublas().sgemmStridedBatched;
  return f ? f(handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc, strideC,
               batchCount)
           : noRealCublas("cublasSgemmStridedBatched");
}

cublasStatus_t CUBLASWINAPI cublasSgemmBatched(cublasHandle_t handle, cublasOperation_t transa,
                                               cublasOperation_t transb, int m, int n, int k, const float* alpha,
                                               const float* const Aarray[], int lda, const float* const Barray[],
                                               int ldb, const float* beta, float* const Carray[], int ldc,
                                               int batchCount) {
  if (auto status = serve(
          handle, arrays(callOf(transa, transb, m, n, k, alpha, nullptr, lda, nullptr, ldb, beta, nullptr, ldc),
                         reinterpret_cast<const void* const*>(Aarray), reinterpret_cast<const void* const*>(Barray),
                         reinterpret_cast<void* const*>(Carray), batchCount)))
    return *status;
  const auto f = realCublas().sgemmBatched;
  return f ? f(handle, transa, transb, m, n, k, alpha, Aarray, lda, Barray, ldb, beta, Carray, ldc, batchCount)
           : noRealCublas("cublasSgemmBatched");
}

cublasStatus_t CUBLASWINAPI cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                         int m, int n, int k, const void* alpha, const void* A, cudaDataType Atype,
                                         int lda, const void* B, cudaDataType Btype, int ldb, const void* beta, void* C,
                                         cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                                         cublasGemmAlgo_t algo) {
  if (auto status = serve(handle, typed(callOf(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc), Atype,
                                        Btype, Ctype, computeType, algo)))
    return *status;
  const auto f = realCublas().gemmEx;
  return f ? f(handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc, computeType,
               algo)
           : noRealCublas("cublasGemmEx");
}

cublasStatus_t CUBLASWINAPI cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k, const void* alpha,
    const void* A, cudaDataType Atype, int lda, long long int strideA, const void* B, cudaDataType Btype, int ldb,
    long long int strideB, const void* beta, void* C, cudaDataType Ctype, int ldc, long long int strideC,
    int batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  if (auto status = serve(handle, typed(strided(callOf(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc),
                                                strideA, strideB, strideC, batchCount),
                                        Atype, Btype, Ctype, computeType, algo)))
    return *status;
  const auto f = realCublas().gemmStridedBatchedEx;
  return f ? f(handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb, strideB, beta, C, Ctype,
               ldc, strideC, batchCount, computeType, algo)
           : noRealCublas("cublasGemmStridedBatchedEx");
}

cublasStatus_t CUBLASWINAPI cublasGemmBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
                                                cublasOperation_t transb, int m, int n, int k, const void* alpha,
                                                const void* const Aarray[], cudaDataType Atype, int lda,
                                                const void* const Barray[], cudaDataType Btype, int ldb,
                                                const void* beta, void* const Carray[], cudaDataType Ctype, int ldc,
                                                int batchCount, cublasComputeType_t computeType,
                                                cublasGemmAlgo_t algo) {
  if (auto status = serve(
          handle, typed(arrays(callOf(transa, transb, m, n, k, alpha, nullptr, lda, nullptr, ldb, beta, nullptr, ldc),
                               Aarray, Barray, Carray, batchCount),
                        Atype, Btype, Ctype, computeType, algo)))
    return *status;
  const auto f = realCublas().gemmBatchedEx;
  return f ? f(handle, transa, transb, m, n, k, alpha, Aarray, Atype, lda, Barray, Btype, ldb, beta, Carray, Ctype, ldc,
               batchCount, computeType, algo)
           : noRealCublas("cublasGemmBatchedEx");
}

}  // extern "C"
