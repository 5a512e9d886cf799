// A program written against cuBLAS for the drop-in's CPU tests (tests/dropin_test.cpp runs it):
// linked to libgemmtune_cublas.so ahead of the stand-in cuBLAS (dropin_fake_cublas.cpp), it makes
// one call of every kind the drop-in sees, prints each status, then the stand-in's log of what
// reached it. The matrices are fake device addresses: nothing here may dereference them.
#include <cublas_v2.h>

#include <cstdio>

extern "C" const char* fakeCublasLog();

int main() {
  cublasHandle_t h = nullptr;
  cublasCreate(&h);
  const float alpha = 1.0f, beta = 0.5f;
  const auto* A = reinterpret_cast<const float*>(0x100000);
  const auto* B = reinterpret_cast<const float*>(0x200000);
  auto* C = reinterpret_cast<float*>(0x300000);
  const float* const* arrays = reinterpret_cast<const float* const*>(0x400000);
  float* const* arrayC = reinterpret_cast<float* const*>(0x500000);
  const void* const* vArrays = reinterpret_cast<const void* const*>(0x400000);
  void* const* vArrayC = reinterpret_cast<void* const*>(0x500000);
  auto say = [](const char* what, cublasStatus_t s) { std::printf("status %s %d\n", what, static_cast<int>(s)); };
  const auto N = CUBLAS_OP_N, T = CUBLAS_OP_T;

  for (int i = 0; i < 3; ++i) say("sgemm", cublasSgemm(h, N, N, 4, 5, 6, &alpha, A, 4, B, 6, &beta, C, 4));
  say("sgemm-negative-m", cublasSgemm(h, N, N, -1, 5, 6, &alpha, A, 4, B, 6, &beta, C, 4));
  say("strided", cublasSgemmStridedBatched(h, T, N, 8, 9, 10, &alpha, A, 10, 80, B, 10, 90, &beta, C, 8, 72, 3));
  say("batched", cublasSgemmBatched(h, N, T, 8, 9, 10, &alpha, arrays, 8, arrays, 9, &beta, arrayC, 8, 2));
  say("gemmex", cublasGemmEx(h, N, N, 4, 5, 6, &alpha, A, CUDA_R_32F, 4, B, CUDA_R_32F, 6, &beta, C, CUDA_R_32F, 4,
                             CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  say("gemmex-half", cublasGemmEx(h, N, N, 4, 5, 6, &alpha, A, CUDA_R_16F, 4, B, CUDA_R_16F, 6, &beta, C, CUDA_R_16F,
                                  4, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  say("gemmex-strided", cublasGemmStridedBatchedEx(h, N, T, 7, 3, 2, &alpha, A, CUDA_R_32F, 7, 14, B, CUDA_R_32F, 3, 6,
                                                   &beta, C, CUDA_R_32F, 7, 21, 4, CUBLAS_COMPUTE_32F_PEDANTIC,
                                                   CUBLAS_GEMM_DEFAULT));
  say("gemmex-batched", cublasGemmBatchedEx(h, T, T, 7, 3, 2, &alpha, vArrays, CUDA_R_32F, 2, vArrays, CUDA_R_32F, 3,
                                            &beta, vArrayC, CUDA_R_32F, 7, 5, CUBLAS_COMPUTE_32F_FAST_TF32,
                                            CUBLAS_GEMM_DEFAULT));
  cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH);
  say("sgemm-tf32", cublasSgemm(h, N, N, 4, 5, 6, &alpha, A, 4, B, 6, &beta, C, 4));
  cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);
  cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE);
  // Device scalars at a fake address: a host read of them would crash this program.
  const auto* deviceScalar = reinterpret_cast<const float*>(0x10);
  say("sgemm-device-scalars", cublasSgemm(h, N, N, 4, 5, 6, deviceScalar, A, 4, B, 6, deviceScalar, C, 4));
  cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST);
  const float zero = 0.0f;
  say("sgemm-alpha0", cublasSgemm(h, N, N, 4, 5, 6, &zero, A, 4, B, 6, &beta, C, 4));
  say("sgemm-lda-too-small", cublasSgemm(h, N, N, 4, 5, 6, &alpha, A, 3, B, 6, &beta, C, 4));
  cublasDestroy(h);
  std::fputs(fakeCublasLog(), stdout);
  return 0;
}
