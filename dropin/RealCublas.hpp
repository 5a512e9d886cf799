// RealCublas: the cuBLAS the host program uses, whose entry points the drop-in forwards to. Found
// at the first call (by then the program has made a handle, so its cuBLAS is loaded):
//   1. $GEMMTUNE_REAL_CUBLAS, a path to load (unusual installs; the tests' stand-in);
//   2. the next definition after the drop-in (dlsym RTLD_NEXT): the drop-in preloaded or linked
//      ahead of a cuBLAS the program links;
//   3. a cuBLAS already loaded privately (RTLD_LOCAL, as Python loads PyTorch's): libcublas.so.13,
//      then .so.12, by soname without loading anything;
//   4. loading libcublas.so.13, then .so.12.
// The handles a program passes belong to its cuBLAS, so every entry point comes from the one
// library found, and never from the drop-in itself.
#pragma once

#include <cublas_v2.h>

#include <string>

namespace gemmtune::dropin {

struct RealCublas {
  decltype(&cublasSgemm_v2) sgemm = nullptr;
  decltype(&cublasSgemmBatched) sgemmBatched = nullptr;
  decltype(&cublasSgemmStridedBatched) sgemmStridedBatched = nullptr;
  // The C entry points (cublas_api.h's C++ overloads that take a cudaDataType compute type are
  // inline wrappers that call these).
  cublasStatus_t (*gemmEx)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                           const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                           cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t) = nullptr;
  cublasStatus_t (*gemmBatchedEx)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                  const void* const[], cudaDataType, int, const void* const[], cudaDataType, int,
                                  const void*, void* const[], cudaDataType, int, int, cublasComputeType_t,
                                  cublasGemmAlgo_t) = nullptr;
  cublasStatus_t (*gemmStridedBatchedEx)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                         const void*, const void*, cudaDataType, int, long long, const void*,
                                         cudaDataType, int, long long, const void*, void*, cudaDataType, int,
                                         long long, int, cublasComputeType_t, cublasGemmAlgo_t) = nullptr;
  decltype(&cublasGetStream_v2) getStream = nullptr;
  decltype(&cublasGetMathMode) getMathMode = nullptr;
  decltype(&cublasGetPointerMode_v2) getPointerMode = nullptr;

  std::string path;  // the library the entry points come from; empty when none was found
  std::string why;   // when none was found: why, and what to do
  bool complete() const;
};

// The program's cuBLAS, found on the first call (thread-safe), never unloaded.
const RealCublas& realCublas();

// What a forwarded call returns when no cuBLAS was found: CUBLAS_STATUS_NOT_INITIALIZED, after one
// warning that names `entry` and says why.
cublasStatus_t noRealCublas(const char* entry);

}  // namespace gemmtune::dropin
