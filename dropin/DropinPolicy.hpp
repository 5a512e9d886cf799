// DropinPolicy: which calls the cuBLAS drop-in may compute itself. Everything else — a policy of
// off, a malformed call (cuBLAS decides its status), a handle that allows TF32 or passes scalars
// in device memory, a type or compute type other than FP32 — goes to the real cuBLAS unchanged.
#pragma once

#include <cublas_v2.h>

#include <string>

#include "gemmtune/Precision.hpp"

namespace gemmtune::dropin {

enum class Policy {
  measured,  // only where the store has a measured gemmtune row for this GPU and problem that beat cuBLAS
  always,    // every FP32 call the library can run (its own choice, cuBLAS's rows included)
  off,       // pure pass-through (A/B runs); record mode still records
};

// $GEMMTUNE_CUBLAS (`env`, null when unset: measured), case-insensitive. An unknown value gives
// measured and sets `warning`.
Policy policyFrom(const char* env, std::string& warning);
const char* toString(Policy policy);

// $GEMMTUNE_PRECISION (null or empty: strict), case-insensitive: strict serves FP32 FMA kernels
// only; faithful also tensor-core kernels at FP32 accuracy (tf32x3, fp16x3, wgmmafp16x3) to default-math calls. An
// unknown value gives strict and sets `warning`.
PrecisionClass precisionFrom(const char* env, std::string& warning);

// A pedantic call (CUBLAS_PEDANTIC_MATH, or CUBLAS_COMPUTE_32F_PEDANTIC through cublasGemm*Ex) asks
// for FP32 multiply-adds: under `served` faithful it goes to cuBLAS; empty otherwise.
std::string pedanticRefusal(PrecisionClass served, cublasMath_t mathMode, bool pedanticCompute);

// The op of a real matrix: N, or T for CUBLAS_OP_T and CUBLAS_OP_C (the same for real data);
// false for anything else (cuBLAS refuses it).
bool realOp(cublasOperation_t op, bool& transposed);

// Why a handle in `pointerMode` and `mathMode` asks for something other than what the drop-in
// computes (host scalars, FP32 without TF32 or other reduced precision); empty when it may serve.
std::string handleRefusal(cublasPointerMode_t pointerMode, cublasMath_t mathMode);

// The same for cublasGemm*Ex: A, B and C CUDA_R_32F, compute CUBLAS_COMPUTE_32F (whose precision
// the math mode sets) or CUBLAS_COMPUTE_32F_PEDANTIC (FP32 whatever the math mode), and an algo
// cuBLAS defines without tensor cores (CUBLAS_GEMM_DEFAULT, CUBLAS_GEMM_ALGO0..23): cuBLAS judges
// any other value itself.
std::string exRefusal(cudaDataType a, cudaDataType b, cudaDataType c, cublasComputeType_t compute,
                      cublasGemmAlgo_t algo, cublasPointerMode_t pointerMode, cublasMath_t mathMode);

// alpha == 0: BLAS reads neither A nor B then (NaN or Inf in them must not reach C, and beta == 1
// leaves C exactly as it was), which gemmtune's kernels, computing alpha·(A·B), do not promise.
std::string scalarRefusal(float alpha);

}  // namespace gemmtune::dropin
