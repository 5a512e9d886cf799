// dropin_overhead: what the cuBLAS drop-in adds to a call, on a GPU. The same prepared 64x64x64
// column-major SGEMM enqueued three ways on one stream: Library::sgemm() directly, cublasSgemm()
// through libgemmtune_cublas.so (linked ahead of cuBLAS; GEMMTUNE_CUBLAS=always so that it serves),
// and the real cuBLAS (its own entry point, looked up in libcublas). Host time per call, median
// of rounds of 256 calls (each round synchronised after, so the launch queue never fills).
// Usage: dropin_overhead [--rounds N]   (prints one line per path and the drop-in's overhead)
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "gemmtune/Library.hpp"

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kCalls = 256;

template <class F>
double medianMicrosPerCall(int rounds, F&& call) {
  std::vector<double> us;
  for (int r = 0; r < rounds; ++r) {
    const auto t0 = Clock::now();
    for (int i = 0; i < kCalls; ++i) call();
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / kCalls);
    cudaDeviceSynchronize();
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 200;
  if (argc == 3 && std::strcmp(argv[1], "--rounds") == 0) rounds = std::atoi(argv[2]);
  setenv("GEMMTUNE_CUBLAS", "always", 1);
  setenv("GEMMTUNE_CUBLAS_REPORT", "1", 1);
  const int n = 64;
  float *a = nullptr, *b = nullptr, *c = nullptr;
  cudaMalloc(&a, n * n * 4), cudaMalloc(&b, n * n * 4), cudaMalloc(&c, n * n * 4);
  cudaMemset(a, 0, n * n * 4), cudaMemset(b, 0, n * n * 4);
  cudaStream_t stream = nullptr;
  cudaStreamCreate(&stream);
  cublasHandle_t h = nullptr;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return std::fprintf(stderr, "no cuBLAS handle\n"), 2;
  cublasSetStream(h, stream);
  void* real = dlopen("libcublas.so.13", RTLD_NOW | RTLD_NOLOAD);
  if (!real) real = dlopen("libcublas.so.12", RTLD_NOW | RTLD_NOLOAD);
  auto realSgemm = real ? reinterpret_cast<decltype(&cublasSgemm_v2)>(dlsym(real, "cublasSgemm_v2")) : nullptr;
  if (!realSgemm) return std::fprintf(stderr, "the real cublasSgemm_v2 not found\n"), 2;
  const float one = 1, zero = 0;
  gemmtune::Library lib;
  using gemmtune::Op;
  using gemmtune::Order;
  auto viaLibrary = [&] {
    lib.sgemm(stream, Order::column_major, Op::N, Op::N, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
  };
  auto viaDropin = [&] { cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n); };
  auto viaCublas = [&] { realSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n); };
  for (int i = 0; i < 50; ++i) viaLibrary(), viaDropin(), viaCublas();  // prepared, loaded, warm
  cudaDeviceSynchronize();
  double lib1 = 0, drop = 0, blas = 0;
  for (int rep = 0; rep < 3; ++rep) {  // interleaved: clocks and caches drift alike
    lib1 += medianMicrosPerCall(rounds, viaLibrary) / 3;
    drop += medianMicrosPerCall(rounds, viaDropin) / 3;
    blas += medianMicrosPerCall(rounds, viaCublas) / 3;
  }
  std::printf("host time per call, 64^3 (median of %d rounds of %d calls, 3 interleaved passes):\n", rounds, kCalls);
  std::printf("  Library::sgemm()          %7.3f us\n", lib1);
  std::printf("  cublasSgemm via drop-in   %7.3f us\n", drop);
  std::printf("  cuBLAS itself             %7.3f us\n", blas);
  std::printf("drop-in overhead over Library::sgemm(): %.3f us\n", drop - lib1);
  return 0;
}
