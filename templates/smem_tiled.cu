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
// | TRANS_A   | A stored as K rows of M (lda >= M), else M rows of K    | -                              |
// | TRANS_B   | B stored as N rows of K (ldb >= K), else K rows of N    | -                              |
//
// Contract shared by every gemmtune template: row-major C = alpha * op(A) * op(B) + beta * C, C
// M x N (ldc); beta == 0 never reads C. Batch b (blockIdx.z) reads and writes the matrices
// gemmtune_select_batch gives.
// Every load is coalesced: consecutive threads read consecutive elements of the operand as it is
// stored (along k for A and along n for B when not transposed, along m and along k when
// transposed). A transposed operand is stored into its tile transposed, with padded rows: B's
// by one float, so the column a warp writes falls in 32 different banks; A's by four, which
// keeps its rows 16-byte aligned so that ptxas reads four k steps of a row at once, as for op N
// (with one float of padding, op T ran 24% slower on an H200 at 4096^3), at the price of a
// 4-way conflict on the one store per k tile.
// Launch: grid (ceil(N / BLOCKSIZE), ceil(M / BLOCKSIZE), batch), block BLOCKSIZE^2, no dynamic
// smem; static smem 4 * BLOCKSIZE * (2 * BLOCKSIZE + 4 * TRANS_A + TRANS_B) bytes.
// Includes only batch.cuh (the batch argument) for NVRTC.

#include "batch.cuh"

template <int BLOCKSIZE, bool GUARDED, bool TRANS_A, bool TRANS_B>
__global__ void __launch_bounds__(BLOCKSIZE * BLOCKSIZE)
    sgemm_smem_tiled(int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
                     const float* __restrict__ B, int ldb, float beta, float* __restrict__ C, int ldc, GemmtuneBatch batch) {
  static_assert(BLOCKSIZE >= 1, "BLOCKSIZE must be at least 1");
  static_assert(BLOCKSIZE * BLOCKSIZE <= 1024, "BLOCKSIZE^2 threads exceed CUDA's 1024 per block");
  {  // this batch's matrices (through plain copies: a reference cannot bind a __restrict__ pointer)
    const float *a = A, *b = B;
    float* c = C;
    gemmtune_select_batch(batch, blockIdx.z, a, b, c);
    A = a, B = b, C = c;
  }

  __shared__ float As[BLOCKSIZE][BLOCKSIZE + (TRANS_A ? 4 : 0)];  // As[m][k]
  __shared__ float Bs[BLOCKSIZE][BLOCKSIZE + (TRANS_B ? 1 : 0)];  // Bs[k][n]

  // Consecutive threads take consecutive columns: coalesced loads of B and stores of C.
  const int tx = threadIdx.x % BLOCKSIZE;
  const int ty = threadIdx.x / BLOCKSIZE;
  const int rowBase = blockIdx.y * BLOCKSIZE, colBase = blockIdx.x * BLOCKSIZE;
  const int row = rowBase + ty;
  const int col = colBase + tx;

  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += BLOCKSIZE) {
    // Out-of-range elements become zeros: they add exactly nothing to the dot products.
    if (!TRANS_A) {  // element (row, k0 + tx)
      As[ty][tx] = (!GUARDED || (row < M && k0 + tx < K)) ? A[(long long)row * lda + k0 + tx] : 0.0f;
    } else {  // element (rowBase + tx, k0 + ty), stored at A[k * lda + m]
      As[tx][ty] = (!GUARDED || (rowBase + tx < M && k0 + ty < K)) ? A[(long long)(k0 + ty) * lda + rowBase + tx] : 0.0f;
    }
    if (!TRANS_B) {  // element (k0 + ty, col)
      Bs[ty][tx] = (!GUARDED || (k0 + ty < K && col < N)) ? B[(long long)(k0 + ty) * ldb + col] : 0.0f;
    } else {  // element (k0 + tx, colBase + ty), stored at B[n * ldb + k]
      Bs[tx][ty] = (!GUARDED || (k0 + tx < K && colBase + ty < N)) ? B[(long long)(colBase + ty) * ldb + k0 + tx] : 0.0f;
    }
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
