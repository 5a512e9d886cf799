// Test-only kernel template (family "probe"): one result per thread, no shared memory. It exists to
// show that a family is one template plus one spec: tests/families/ProbeNaive.cpp registers it
// without any other file naming it.
//
// | parameter | meaning                                   | constraints                |
// |-----------|-------------------------------------------|----------------------------|
// | BS        | edge of the square C tile of a block      | BS * BS multiple of 32, <= 1024 |
// | GUARDED   | true: any M, N, K >= 1; false: BS | M, N  | -                          |
//
// Launch: grid (ceil(N / BS), ceil(M / BS)), block BS * BS (1-D), no shared memory.
// Row-major C = alpha * A * B + beta * C; beta == 0 never reads C.

#include "batch.cuh"

template <int BS, bool GUARDED, bool TRANS_A, bool TRANS_B>
__global__ void __launch_bounds__(BS * BS)
    sgemm_probe_naive(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb, float beta,
                      float* C, int ldc, GemmtuneBatch batch) {
  static_assert(!TRANS_A && !TRANS_B, "the probe reads nn only (its plan refuses the others)");
  gemmtune_select_batch(batch, blockIdx.z, A, B, C);
  static_assert(BS * BS % 32 == 0 && BS * BS <= 1024, "BS*BS threads: whole warps, at most 1024");
  const int row = blockIdx.y * BS + threadIdx.x / BS, col = blockIdx.x * BS + threadIdx.x % BS;
  if (GUARDED && (row >= M || col >= N)) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[row * lda + k] * B[k * ldb + col];
  float* c = C + row * ldc + col;
  *c = beta == 0.0f ? alpha * acc : alpha * acc + beta * *c;
}
