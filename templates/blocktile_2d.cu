// gemmtune kernel template: 2D-blocktiled SGEMM (family "blocktile2d").
//
// Each block computes a BM x BN tile of C; each thread computes a TM x TN sub-tile, so every
// shared-memory read of A feeds TN multiply-adds and every read of B feeds TM. A is stored
// TRANSPOSED in shared memory (BK rows of BM + 4 floats) so a thread reads its TM values of A for
// one k as float4s, like its TN values of B. The unguarded form loads A and B from global memory
// as float4 and stores C as float4.
// Loads follow the operand as stored: float4s along k for A (op N: scattered into the transposed
// tile) or along m (op T: the stored layout already is the tile's, one float4 store); along n
// for B (op N, one float4 store) or along k (op T: scattered into B's tile, whose rows then get
// BN + 4 floats so that the scatter's column writes spread over the banks as A's do).
//
// | parameter | meaning                                       | constraints                          |
// |-----------|-----------------------------------------------|--------------------------------------|
// | BM, BN    | C tile per block (rows, columns)              | multiples of TM and TN, of 4         |
// | BK        | depth of the A and B tiles in shared memory   | multiple of 4                        |
// | TM, TN    | results per thread (rows, columns)            | multiples of 4                       |
// | GUARDED   | true: any shape and alignment; false: below   | -                                    |
// | TRANS_A   | A stored K x M (lda >= M), else M x K         | -                                    |
// | TRANS_B   | B stored N x K (ldb >= K), else K x N         | -                                    |
//
// Threads per block: (BM / TM) * (BN / TN), a multiple of 32 and at most 1024.
// Grid: (ceil(N / BN), ceil(M / BM), batch), blockIdx.x over N, blockIdx.z the batch. Dynamic
// shared memory: (BM + 4 + BN + (TRANS_B ? 4 : 0)) * BK * 4 bytes (above 48 KiB the launcher opts
// in). No static shared memory.
// Preconditions, both forms: M, N, K >= 1; lda, ldb >= the stored row length, ldc >= N; 4-byte
// aligned A, B, C; (stored rows + one tile) * ld below 2^31 for A and B, and (M + BM) * ldc
// (32-bit offsets, formed up to one tile past the last row or k step). GUARDED == false
// additionally: BM | M, BN | N, BK | K; A, B, C 16-byte aligned; lda, ldb, ldc multiples of 4.
// Contract shared by every gemmtune template: row-major C = alpha * op(A) * op(B) + beta * C, C
// M x N (ldc); beta == 0 never reads C. Batch b (blockIdx.z) reads and writes the matrices
// gemmtune_select_batch gives.
// Includes only batch.cuh (the batch argument) for NVRTC.

#include "batch.cuh"

// One operand's ROWS x COLS block of stored rows (rows rowBase.., columns colBase.. of an operand
// of `rows` x `cols` floats in rows of `ld`) into a shared tile with rows of STRIDE floats, as
// float4s along the stored rows: slot s covers stored row s / (COLS/4), column quad s % (COLS/4).
// SCATTER: the tile holds the block transposed (tile[c * STRIDE + r], four scalar stores);
// else as stored (tile[r * STRIDE + c], one float4 store). Guarded: elements past the operand
// read as zeros, and offsets are formed only for rows that exist ((rows + ROWS) * ld may not
// fit in 32 bits); unguarded: the block lies inside, 16-byte aligned.
template <int ROWS, int COLS, int THREADS, int STRIDE, bool SCATTER, bool GUARDED>
__device__ __forceinline__ void gemmtune_blocktile2d_load(float* tile, const float* __restrict__ src, int ld, int rowBase,
                                                        int colBase, int rows, int cols, int tid) {
  constexpr int kSlots = ROWS * COLS / 4, kIters = (kSlots + THREADS - 1) / THREADS;
#pragma unroll
  for (int it = 0; it < kIters; ++it) {
    const int s = tid + it * THREADS;
    if (kSlots % THREADS == 0 || s < kSlots) {
      const int r = s / (COLS / 4), cq = (s % (COLS / 4)) * 4;
      float4 v;
      if (!GUARDED) {
        v = *reinterpret_cast<const float4*>(src + (rowBase + r) * ld + colBase + cq);
      } else {
        const bool rowOk = rowBase + r < rows;
        const float* p = src + (rowOk ? rowBase + r : 0) * ld + colBase + cq;
        v.x = (rowOk && colBase + cq + 0 < cols) ? p[0] : 0.0f;
        v.y = (rowOk && colBase + cq + 1 < cols) ? p[1] : 0.0f;
        v.z = (rowOk && colBase + cq + 2 < cols) ? p[2] : 0.0f;
        v.w = (rowOk && colBase + cq + 3 < cols) ? p[3] : 0.0f;
      }
      if constexpr (SCATTER) {
        tile[(cq + 0) * STRIDE + r] = v.x;
        tile[(cq + 1) * STRIDE + r] = v.y;
        tile[(cq + 2) * STRIDE + r] = v.z;
        tile[(cq + 3) * STRIDE + r] = v.w;
      } else {
        *reinterpret_cast<float4*>(tile + r * STRIDE + cq) = v;
      }
    }
  }
}

template <int BM, int BN, int BK, int TM, int TN, bool GUARDED, bool TRANS_A, bool TRANS_B>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
    sgemm_blocktile_2d(int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
                       const float* __restrict__ B, int ldb, float beta, float* __restrict__ C, int ldc, GemmtuneBatch batch) {
  static_assert(TM >= 4 && TM % 4 == 0 && TN >= 4 && TN % 4 == 0, "TM and TN must be positive multiples of 4");
  static_assert(BM % TM == 0 && BN % TN == 0, "TM must divide BM and TN must divide BN");
  static_assert(BK >= 4 && BK % 4 == 0, "BK must be a positive multiple of 4 (A is loaded as float4 along k)");
  static_assert(BN % 4 == 0, "BN must be a multiple of 4 (B is loaded as float4 along n)");
  constexpr int kThreads = (BM / TM) * (BN / TN);
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "(BM/TM)*(BN/TN) threads: whole warps, at most 1024");
  constexpr int kSA = BM + 4;                   // row stride of transposed A (floats), keeps float4 alignment
  constexpr int kSB = TRANS_B ? BN + 4 : BN;    // row stride of B (floats): padded where B is scattered
  {  // this batch's matrices (through plain copies: a reference cannot bind a __restrict__ pointer)
    const float *a = A, *b = B;
    float* c = C;
    gemmtune_select_batch(batch, blockIdx.z, a, b, c);
    A = a, B = b, C = c;
  }

  extern __shared__ float4 smem4[];
  float* As = reinterpret_cast<float*>(smem4);  // As[k * kSA + m]
  float* Bs = As + BK * kSA;                     // Bs[k * kSB + n]

  const int tid = threadIdx.x;
  const int tRow = tid / (BN / TN), tCol = tid % (BN / TN);  // this thread's TM x TN sub-tile
  const int rowBase = blockIdx.y * BM, colBase = blockIdx.x * BN;

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  for (int k0 = 0; k0 < K; k0 += BK) {
    // A tile, op N: stored rows are rows of the tile (scattered into its transposed layout); op
    // T: stored rows are k rows, the tile's own layout. B tile, op N: stored rows are k rows,
    // the tile's layout; op T: stored rows are columns (scattered).
    if constexpr (!TRANS_A)
      gemmtune_blocktile2d_load<BM, BK, kThreads, kSA, true, GUARDED>(As, A, lda, rowBase, k0, M, K, tid);
    else
      gemmtune_blocktile2d_load<BK, BM, kThreads, kSA, false, GUARDED>(As, A, lda, k0, rowBase, K, M, tid);
    if constexpr (!TRANS_B)
      gemmtune_blocktile2d_load<BK, BN, kThreads, kSB, false, GUARDED>(Bs, B, ldb, k0, colBase, K, N, tid);
    else
      gemmtune_blocktile2d_load<BN, BK, kThreads, kSB, true, GUARDED>(Bs, B, ldb, colBase, k0, N, K, tid);
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM; i += 4) {
        const float4 v = *reinterpret_cast<const float4*>(As + k * kSA + tRow * TM + i);
        a[i] = v.x, a[i + 1] = v.y, a[i + 2] = v.z, a[i + 3] = v.w;
      }
#pragma unroll
      for (int j = 0; j < TN; j += 4) {
        const float4 v = *reinterpret_cast<const float4*>(Bs + k * kSB + tCol * TN + j);
        b[j] = v.x, b[j + 1] = v.y, b[j + 2] = v.z, b[j + 3] = v.w;
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int row = rowBase + tRow * TM + i;
    if (!GUARDED) {
      float* c = C + row * ldc + colBase + tCol * TN;
#pragma unroll
      for (int j = 0; j < TN; j += 4) {
        float4 v = make_float4(alpha * acc[i][j], alpha * acc[i][j + 1], alpha * acc[i][j + 2], alpha * acc[i][j + 3]);
        if (beta != 0.0f) {
          const float4 old = *reinterpret_cast<const float4*>(c + j);
          v.x += beta * old.x, v.y += beta * old.y, v.z += beta * old.z, v.w += beta * old.w;
        }
        *reinterpret_cast<float4*>(c + j) = v;
      }
    } else if (row < M) {
      float* c = C + row * ldc + colBase + tCol * TN;
#pragma unroll
      for (int j = 0; j < TN; ++j)
        if (colBase + tCol * TN + j < N)
          c[j] = beta == 0.0f ? alpha * acc[i][j] : alpha * acc[i][j] + beta * c[j];
    }
  }
}
