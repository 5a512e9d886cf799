// gemmtune kernel template: 1D-blocktiled SGEMM (family "blocktile1d").
//
// Each block computes a BM x BN tile of C; each thread computes TM results of one column, so one
// value of B read from shared memory feeds TM multiply-adds. A and B tiles of depth BK are loaded
// cooperatively; the loader's trip count is a compile-time constant (ceil(tile / threads), the
// last trip predicated off when the tile is not a multiple of the thread count), so any BM, BN,
// BK, TM satisfying the constraints below works. A is stored TRANSPOSED in shared memory
// (BK rows of BM + 4 floats), so a thread's TM values of one k are contiguous and, when TM and BM
// are multiples of 4, load as float4.
// Loads follow the operand as stored, so consecutive threads read consecutive addresses: along k
// for A (op N) and along m for A (op T, which already is the shared layout: its stores are
// conflict-free too); along n for B (op N) and along k for B (op T). Op T's B goes into shared
// memory transposed, in rows of kSB >= BN floats padded so that one warp's stores (BK k steps of
// 32 / BK columns) fall in 32 different banks.
//
// | parameter | meaning                                         | constraints                         |
// |-----------|-------------------------------------------------|-------------------------------------|
// | BM        | rows of the C tile per block                    | >= 1, multiple of TM                |
// | BN        | columns of the C tile per block                 | >= 1                                |
// | BK        | depth of the A and B tiles in shared memory     | >= 1                                |
// | TM        | results per thread (TM rows of one column)      | >= 1, divides BM                    |
// | GUARDED   | true: any M, N, K >= 1; false: see below        | -                                   |
// | TRANS_A   | A stored as K rows of M (lda >= M), else M x K  | -                                   |
// | TRANS_B   | B stored as N rows of K (ldb >= K), else K x N  | -                                   |
// | (derived) | threads per block BM / TM * BN                  | <= 1024 (multiple of 32 advised)    |
//
// Preconditions (enforced by the launcher):
//   both forms: M, N, K >= 1; lda, ldb >= the stored row length, ldc >= N; A, B, C 4-byte
//               aligned; (stored rows + one tile) * ld below 2^31 for A and B ((M + BM) * lda
//               or (K + BK) * lda; (K + BK) * ldb or (N + BN) * ldb) and (M + BM) * ldc (offsets
//               are 32-bit ints, formed up to one tile past the last row or k step).
//   GUARDED == false additionally: M % BM == 0, N % BN == 0, K % BK == 0 (no alignment needed:
//               every global access is a scalar float).
// Threads per block: BM / TM * BN. Grid: (ceil(N / BN), ceil(M / BM), batch), blockIdx.x over N,
// blockIdx.z the batch. Dynamic shared memory: (BM + 4 + kSB) * BK * 4 bytes, kSB = BN for op N
// (above 48 KiB the launcher opts in with CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES). No
// static shared memory.
// Contract shared by every gemmtune template: row-major C = alpha * op(A) * op(B) + beta * C, C
// M x N (ldc); beta == 0 never reads C. Batch b (blockIdx.z) reads and writes the matrices
// gemmtune_select_batch gives.
// GUARDED form: rows of A past M and columns of B past N are loaded clamped (they only feed
// results that are never stored); k past K is zeroed in both A and B, so it adds exactly 0.
// Includes only batch.cuh (the batch argument) for NVRTC.

#include "batch.cuh"

// Row stride (floats) of a transposed B tile: at least BN, and congruent mod 32 to the columns one
// warp's store covers (32 / BK of them for BK < 32, one for BK >= 32), so that the warp's k steps
// land on different banks: bank = (k * stride + column) % 32.
__host__ __device__ constexpr int gemmtune_blocktile1d_stride_b(int bn, int bk) {
  return bn + ((bk >= 32 ? 1 : 32 / bk) - bn % 32 + 32) % 32;
}

template <int BM, int BN, int BK, int TM, bool GUARDED, bool TRANS_A, bool TRANS_B>
__global__ void __launch_bounds__(BM / TM * BN)
    sgemm_blocktile_1d(int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
                       const float* __restrict__ B, int ldb, float beta, float* __restrict__ C, int ldc, GemmtuneBatch batch) {
  static_assert(BM >= 1 && BN >= 1 && BK >= 1 && TM >= 1, "BM, BN, BK and TM must be at least 1");
  static_assert(BM % TM == 0, "TM must divide BM: each thread owns TM whole rows of one column");
  static_assert(BM / TM * BN <= 1024, "BM*BN/TM threads exceed CUDA's 1024 per block");
  constexpr int kThreads = BM / TM * BN;
  constexpr int kSA = BM + 4;  // row stride of transposed A in shared memory (floats)
  constexpr int kSB = TRANS_B ? gemmtune_blocktile1d_stride_b(BN, BK) : BN;  // row stride of B in shared memory
  constexpr bool kVecA = (TM % 4 == 0);  // kSA % 4 == 0 and trow*TM % 4 == 0 -> float4 reads
  constexpr int kAElems = BM * BK, kAIters = (kAElems + kThreads - 1) / kThreads;
  constexpr int kBElems = BK * BN, kBIters = (kBElems + kThreads - 1) / kThreads;
  // Loader unroll: full for short loops; capped for long ones (all loads in flight at once would
  // need one register each and spill).
  constexpr int kAUnroll = kAIters <= 8 ? kAIters : 4;
  constexpr int kBUnroll = kBIters <= 8 ? kBIters : 4;
  {  // this batch's matrices (through plain copies: a reference cannot bind a __restrict__ pointer)
    const float *a = A, *b = B;
    float* c = C;
    gemmtune_select_batch(batch, blockIdx.z, a, b, c);
    A = a, B = b, C = c;
  }

  extern __shared__ float4 smem4[];  // float4: 16-byte aligned base
  float* As = reinterpret_cast<float*>(smem4);  // BK x kSA: As[k * kSA + m]
  float* Bs = As + BK * kSA;                     // BK x kSB: Bs[k * kSB + n]

  const int tid = threadIdx.x;
  const int tcol = tid % BN;  // column of C within the tile
  const int trow = tid / BN;  // owns tile rows trow*TM .. trow*TM + TM - 1
  const int rowBase = blockIdx.y * BM;
  const int colBase = blockIdx.x * BN;

  // Per-thread loader offsets (32-bit; loop-invariant across k tiles) of element (row, k) of A
  // and (k, col) of B as stored. In the guarded form rows of A >= M and columns of B >= N are
  // clamped to valid memory: they only reach results that are never stored.
  auto atA = [&](int row, int k) { return TRANS_A ? k * lda + row : row * lda + k; };
  auto atB = [&](int k, int col) { return TRANS_B ? col * ldb + k : k * ldb + col; };
  const float* Ablk = A + (GUARDED ? 0 : atA(rowBase, 0));
  const float* Bblk = B + (GUARDED ? 0 : atB(0, colBase));

  float acc[TM];
#pragma unroll
  for (int m = 0; m < TM; ++m) acc[m] = 0.0f;

  const int nTiles = GUARDED ? (K + BK - 1) / BK : K / BK;
  for (int t = 0; t < nTiles; ++t) {
    const int k0 = t * BK;
    const bool kTail = GUARDED && (k0 + BK > K);
#pragma unroll kAUnroll
    for (int it = 0; it < kAIters; ++it) {
      const int i = tid + it * kThreads;
      if (kAElems % kThreads == 0 || i < kAElems) {
        // Consecutive threads along the stored row: k for op N, m for op T.
        const int r = TRANS_A ? i % BM : i / BK, k = TRANS_A ? i / BM : i % BK;
        float v;
        if (GUARDED) {
          const int gr = min(rowBase + r, M - 1);
          if (kTail) {
            const int gk = min(k0 + k, K - 1);
            v = A[atA(gr, gk)];
            v = (k0 + k < K) ? v : 0.0f;
          } else {
            v = Ablk[atA(gr, k)];
          }
        } else {
          v = Ablk[atA(r, k)];
        }
        As[k * kSA + r] = v;
      }
    }
#pragma unroll kBUnroll
    for (int it = 0; it < kBIters; ++it) {
      const int i = tid + it * kThreads;
      if (kBElems % kThreads == 0 || i < kBElems) {
        // Consecutive threads along the stored row: n for op N, k for op T.
        const int k = TRANS_B ? i % BK : i / BN, c = TRANS_B ? i / BK : i % BN;
        float v;
        if (GUARDED) {
          const int gc = min(colBase + c, N - 1);
          if (kTail) {
            const int gk = min(k0 + k, K - 1);
            v = B[atB(gk, gc)];
            v = (k0 + k < K) ? v : 0.0f;
          } else {
            v = Bblk[atB(k, gc)];
          }
        } else {
          v = Bblk[atB(k, c)];
        }
        Bs[k * kSB + c] = v;
      }
    }
    Ablk += atA(0, BK);
    Bblk += atB(BK, 0);
    __syncthreads();

    const float* as = As + trow * TM;
    const float* bs = Bs + tcol;
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      const float b = bs[k * kSB];
      float a[TM];
      if constexpr (kVecA) {
#pragma unroll
        for (int m = 0; m < TM; m += 4) {
          const float4 v = *reinterpret_cast<const float4*>(as + k * kSA + m);
          a[m] = v.x; a[m + 1] = v.y; a[m + 2] = v.z; a[m + 3] = v.w;
        }
      } else {
#pragma unroll
        for (int m = 0; m < TM; ++m) a[m] = as[k * kSA + m];
      }
#pragma unroll
      for (int m = 0; m < TM; ++m) acc[m] += a[m] * b;
    }
    __syncthreads();
  }

  const int col = colBase + tcol;
  const int row0 = rowBase + trow * TM;
  if (GUARDED && (col >= N || row0 >= M)) return;  // keeps row0 * ldc < M * ldc
  float* c = C + row0 * ldc + col;
  if (beta == 0.0f) {
#pragma unroll
    for (int m = 0; m < TM; ++m)
      if (!GUARDED || row0 + m < M) c[m * ldc] = alpha * acc[m];
  } else {
#pragma unroll
    for (int m = 0; m < TM; ++m)
      if (!GUARDED || row0 + m < M) c[m * ldc] = alpha * acc[m] + beta * c[m * ldc];
  }
}
