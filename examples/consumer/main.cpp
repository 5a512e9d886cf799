// gemmtune_consumer: the smallest program that runs gemmtune's tuned SGEMM.
//   gemmtune_consumer [N]   -> C = A * B for N x N matrices on GPU 0, checked against the CPU.
// Without a GPU it prints the status sgemm() returns and exits 0. Results come from the database
// named by $GEMMTUNE_DB (default: ~/.local/share/gemmtune/tune.db); without one, sgemm() runs
// the built-in default kernel.
#include <cuda_runtime.h>
#include <gemmtune/Errors.hpp>
#include <gemmtune/Library.hpp>

#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 512;
  if (n < 1) {
    std::fprintf(stderr, "usage: gemmtune_consumer [N >= 1]\n");
    return 2;
  }
  gemmtune::Library lib;

  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    try {
      lib.best(0, n, n, n);
    } catch (const gemmtune::NoGpuError& e) {
      std::printf("no GPU: best() threw NoGpuError (%s)\n", e.what());
    }
    // No context can exist, so sgemm() answers no_gpu before it touches the (host) pointers.
    std::vector<float> host(static_cast<size_t>(n) * n);
    gemmtune::Status s = lib.sgemm(nullptr, n, n, n, 1.0f, host.data(), n, host.data(), n, 0.0f, host.data(), n);
    std::printf("no GPU: sgemm() returned %s (%s)\n", gemmtune::toString(s), gemmtune::Library::lastError().c_str());
    return s == gemmtune::Status::no_gpu ? 0 : 1;
  }

  cudaSetDevice(0);  // makes the device's primary context current, which sgemm() launches into
  gemmtune::Choice choice = lib.best(0, n, n, n);
  std::printf("best for %dx%dx%d: %s (%s%s%s)\n", n, n, n, choice.instance.c_str(), gemmtune::toString(choice.match),
              choice.measuredSize.empty() ? "" : ", measured at ", choice.measuredSize.c_str());

  // Small integers: every partial sum is exact in FP32, so the GPU must match the CPU exactly.
  const size_t elems = static_cast<size_t>(n) * n;
  std::vector<float> a(elems), b(elems), c(elems);
  for (size_t i = 0; i < elems; ++i) {
    a[i] = static_cast<float>(static_cast<int>(i * 7 % 17) - 8);
    b[i] = static_cast<float>(static_cast<int>(i * 5 % 13) - 6);
  }
  float *dA = nullptr, *dB = nullptr, *dC = nullptr;
  if (cudaMalloc(&dA, elems * sizeof(float)) != cudaSuccess || cudaMalloc(&dB, elems * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&dC, elems * sizeof(float)) != cudaSuccess) {
    std::fprintf(stderr, "cudaMalloc failed\n");
    return 1;
  }
  cudaMemcpy(dA, a.data(), elems * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(dB, b.data(), elems * sizeof(float), cudaMemcpyHostToDevice);

  gemmtune::Status s = lib.sgemm(nullptr, n, n, n, 1.0f, dA, n, dB, n, 0.0f, dC, n);
  cudaError_t e = cudaDeviceSynchronize();
  if (s != gemmtune::Status::ok || e != cudaSuccess) {
    std::fprintf(stderr, "sgemm: %s %s / %s\n", gemmtune::toString(s), gemmtune::Library::lastError().c_str(),
                 cudaGetErrorString(e));
    return 1;
  }
  cudaMemcpy(c.data(), dC, elems * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(dA);
  cudaFree(dB);
  cudaFree(dC);

  // Spot-check rows spread over the matrix.
  for (int i = 0; i < n; i += (n + 7) / 8)
    for (int j = 0; j < n; ++j) {
      double want = 0;
      for (int k = 0; k < n; ++k) want += double(a[size_t(i) * n + k]) * b[size_t(k) * n + j];
      if (c[size_t(i) * n + j] != static_cast<float>(want)) {
        std::fprintf(stderr, "wrong result at (%d, %d): %g, expected %g\n", i, j, c[size_t(i) * n + j], want);
        return 1;
      }
    }
  std::printf("sgemm %dx%dx%d: ok (matches the CPU exactly)\n", n, n, n);
  return 0;
}
