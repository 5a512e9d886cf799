// gemmtune kernel template: shared-memory tiled SGEMM (family "smem").
//
// Each block computes one BLOCKSIZE x BLOCKSIZE tile of C, one result per thread. A and B tiles
// of the same edge are staged through shared memory, so every global element is read once per
// tile instead of once per multiply-add.
//
// | parameter | meaning                                                 | constraints                    |
// |-----------|---------------------------------------------------------|--------------------------------|
// | BLOCKSIZE | edge of the square C tile; BLOCKSIZE^2 threads per block | >= 1; BLOCKSIZE^2 <= 1024      |
// | GUARDED   | true: any M, N, K >= 1; false: BLOCKSIZE divides M, N, K | -                              |
//
// Contract shared by every gemmtune template: row-major C = alpha * A * B + beta * C with
// A M x K (lda), B K x N (ldb), C M x N (ldc); beta == 0 never reads C.
// Launch: grid (ceil(N / BLOCKSIZE), ceil(M / BLOCKSIZE)), block BLOCKSIZE^2, no dynamic smem.
// Includes only batch.cuh (the batch argument) for NVRTC.

#include "batch.cuh"

template <int BLOCKSIZE, bool GUARDED, bool TRANS_A, bool TRANS_B>
__global__ void __launch_bounds__(BLOCKSIZE * BLOCKSIZE)
    sgemm_smem_tiled(int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
                     const float* __restrict__ B, int ldb, float beta, float* __restrict__ C, int ldc, GemmtuneBatch batch) {
  static_assert(BLOCKSIZE >= 1, "BLOCKSIZE must be at least 1");
  static_assert(BLOCKSIZE * BLOCKSIZE <= 1024, "BLOCKSIZE^2 threads exceed CUDA's 1024 per block");

  __shared__ float As[BLOCKSIZE][BLOCKSIZE];
  __shared__ float Bs[BLOCKSIZE][BLOCKSIZE];

  // Consecutive threads take consecutive columns: coalesced loads of B and stores of C.
  const int tx = threadIdx.x % BLOCKSIZE;
  const int ty = threadIdx.x / BLOCKSIZE;
  const int row = blockIdx.y * BLOCKSIZE + ty;
  const int col = blockIdx.x * BLOCKSIZE + tx;

  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += BLOCKSIZE) {
    // Out-of-range elements become zeros: they add exactly nothing to the dot products.
    As[ty][tx] = (!GUARDED || (row < M && k0 + tx < K)) ? A[(long long)row * lda + k0 + tx] : 0.0f;
    Bs[ty][tx] = (!GUARDED || (k0 + ty < K && col < N)) ? B[(long long)(k0 + ty) * ldb + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BLOCKSIZE; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }

  if (!GUARDED || (row < M && col < N)) {
    float* c = C + (long long)row * ldc + col;
    *c = (beta == 0.0f) ? alpha * acc : alpha * acc + beta * *c;
  }
}
