// gemmtune kernel template: warp-tiled SGEMM with a cp.async pipeline (family "warppipe").
//
// The warp tiling of warptile.cu (BM x BN per block, WM x WN per warp in WMITER x WNITER
// sub-tiles, TM x TN per thread in each; A transposed in shared memory with rows of BM + 4 floats,
// fragments read as float4 and double-buffered in registers), but k tiles reach shared memory
// through a STAGES-deep cp.async pipeline (sm_80+) instead of staging registers: STAGES - 1 tiles
// are in flight while one is multiplied, one barrier per k tile, and no registers hold tiles on
// their way. A is copied one float at a time into its transposed place: the lanes of a warp copy
// KC (8, or 4 where BK is not a multiple of 8) consecutive k of 32 / KC rows, so the global
// reads are whole 32-byte sectors and, with the BM + 4 row stride, the shared-memory writes fall
// in 32 different banks. B is copied 16 bytes at a time (the guarded form too where B is 16-byte
// aligned and ldb % 4 == 0, zero-filling past N), otherwise one float at a time.
//
// | parameter | meaning                                              | constraints                          |
// |-----------|------------------------------------------------------|--------------------------------------|
// | BM .. THREADS | as warptile.cu                                   | as warptile.cu                       |
// | STAGES    | k tiles in shared memory (in flight + multiplied)   | >= 2                                 |
// | GUARDED   | true: any shape/alignment; false: see below          | -                                    |
//
// Preconditions (enforced by the launcher):
//   both forms: M, N, K >= 1; lda >= K, ldb >= N, ldc >= N; A, B, C 4-byte aligned;
//               (M + BM) * lda, (K + BK) * ldb and (M + BM) * ldc each < 2^31 (32-bit offsets).
//   GUARDED == false additionally: M % BM == 0, N % BN == 0, K % BK == 0; B and C 16-byte aligned;
//               ldb and ldc multiples of 4 (16-byte copies of B, float4 loads/stores of C).
//   GUARDED == true: nothing more. A copy of an element outside A or B reads nothing and fills a
//               zero (cp.async with a short source size), so the k tail needs no special case; B
//               is copied 16 bytes at a time where B is 16-byte aligned and ldb % 4 == 0; C
//               stores are bounds-checked, float4 where C is 16-byte aligned, ldc % 4 == 0 and
//               N % 4 == 0 (decided once per launch).
// Threads per block: THREADS. Grid: (ceil(N / BN), ceil(M / BM)), blockIdx.x over N.
// Dynamic shared memory: STAGES * BK * (BM + 4 + BN) * 4 bytes (above 48 KiB the launcher opts in).
// Contract shared by every gemmtune template: row-major C = alpha * A * B + beta * C with
// A M x K (lda), B K x N (ldb), C M x N (ldc); beta == 0 never reads C.
// Includes warp_tile.cuh (the warp tiling, its fragment multiply and epilogue) and cp_async.cuh
// (the cp.async copies), family headers.

#include "cp_async.cuh"
#include "warp_tile.cuh"
#include "batch.cuh"

template <int BM, int BN, int BK, int WM, int WN, int WNITER, int TM, int TN, int THREADS, int STAGES, bool GUARDED, bool TRANS_A, bool TRANS_B>
__global__ void __launch_bounds__(THREADS)
    sgemm_warppipe(int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
                   const float* __restrict__ B, int ldb, float beta, float* __restrict__ C, int ldc, GemmtuneBatch batch) {
  using Tile = WarpTile<BM, BN, BK, WM, WN, WNITER, TM, TN, THREADS>;  // its static_asserts check the tiling
  static_assert(BM % 32 == 0, "BM must be a multiple of 32 (the BM + 4 row stride spreads A's copies over the banks)");
  static_assert(BN % 4 == 0, "BN must be a multiple of 4 (16-byte copies of B)");
  static_assert(STAGES >= 2, "STAGES must be at least 2 (one tile lands while another is multiplied)");
  constexpr int kSA = Tile::kSA, kStage = Tile::kStage;
  constexpr int KC = BK % 8 == 0 ? 8 : 4;   // consecutive k of one row that neighbouring lanes copy
  constexpr int kAIters = (BM * BK + THREADS - 1) / THREADS;
  constexpr int kBSlots4 = BK * BN / 4, kBSlots1 = BK * BN;  // 16-byte and one-float copies of B
  constexpr int kBIters4 = (kBSlots4 + THREADS - 1) / THREADS, kBIters1 = (kBSlots1 + THREADS - 1) / THREADS;
  // The guarded form's copy loops unroll by 4 only: fully unrolled, ptxas keeps every copy's
  // address live across the k loop.
  constexpr int kUnrollA = GUARDED ? 4 : kAIters, kUnrollB4 = GUARDED ? 4 : kBIters4;

  extern __shared__ float4 smem4[];
  float* const smem = reinterpret_cast<float*>(smem4);

  const int tid = threadIdx.x;
  const int rowBase = blockIdx.y * BM, colBase = blockIdx.x * BN;

  // B in 16-byte copies: always unguarded; guarded where B is 16-byte aligned and ldb % 4 == 0
  // (decided once per launch), a row's last chunk copying only the floats before N.
  const bool bVec = !GUARDED || ((reinterpret_cast<unsigned long long>(B) & 15) == 0 && (ldb & 3) == 0);

  const int nTiles = (K + BK - 1) / BK;  // the unguarded form: K % BK == 0
  // Starts the copies of k tile `tile` into `stage`, then closes a commit group (an empty one past
  // the last tile, so that every iteration waits for the same group count).
  auto issue = [&](int tile, float* stage) {
    if (tile < nTiles) {
      float* const As = stage;
      float* const Bs = stage + BK * kSA;
      const int k0 = tile * BK;
#pragma unroll kUnrollA
      for (int it = 0; it < kAIters; ++it) {
        const int s = tid + it * THREADS;
        if ((BM * BK) % THREADS == 0 || s < BM * BK) {
          const int kLo = s % KC, rest = s / KC;
          const int r = rest % BM, k = (rest / BM) * KC + kLo;
          const bool on = !GUARDED || (rowBase + r < M && k0 + k < K);
          // Offsets only of elements that exist: (M + BM) * lda may not fit in 32 bits.
          cpAsync4(As + k * kSA + r, on ? A + (rowBase + r) * lda + k0 + k : A, on);
        }
      }
      if (bVec) {
#pragma unroll kUnrollB4
        for (int it = 0; it < kBIters4; ++it) {
          const int s = tid + it * THREADS;
          if (kBSlots4 % THREADS == 0 || s < kBSlots4) {
            const int kr = s / (BN / 4), cq = (s % (BN / 4)) * 4;
            if constexpr (!GUARDED) {
              cpAsync16(Bs + kr * BN + cq, B + (k0 + kr) * ldb + colBase + cq);
            } else {
              const int left = k0 + kr < K ? min(max(N - (colBase + cq), 0), 4) : 0;
              cpAsync16Part(Bs + kr * BN + cq, left > 0 ? B + (k0 + kr) * ldb + colBase + cq : B, 4 * left);
            }
          }
        }
      } else if constexpr (GUARDED) {
#pragma unroll 4
        for (int it = 0; it < kBIters1; ++it) {
          const int s = tid + it * THREADS;
          if (kBSlots1 % THREADS == 0 || s < kBSlots1) {
            const int kr = s / BN, c = s % BN;
            const bool on = k0 + kr < K && colBase + c < N;
            cpAsync4(Bs + kr * BN + c, on ? B + (k0 + kr) * ldb + colBase + c : B, on);
          }
        }
      }
    }
    cpAsyncCommit();
  };

  float acc[Tile::kRows][Tile::kCols];
  Tile::clear(acc);
  const typename Tile::Place place = Tile::place(tid);

#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) issue(s, smem + s * kStage);
  int readStage = 0, writeStage = STAGES - 1;
  for (int t = 0; t < nTiles; ++t) {
    cpAsyncWait<STAGES - 2>();  // tile t has landed (this thread's copies)
    __syncthreads();  // ... everyone's; and every thread is done with the stage refilled next
    issue(t + STAGES - 1, smem + writeStage * kStage);
    const float* cur = smem + readStage * kStage;
    readStage = readStage + 1 == STAGES ? 0 : readStage + 1;
    writeStage = writeStage + 1 == STAGES ? 0 : writeStage + 1;

    Tile::multiply(cur, place, acc);
  }
  cpAsyncWaitAll();  // no copy may outlive the block (empty groups only, but to be sure)

  // ---- epilogue: float4 where C allows (always in the unguarded form) ----
  const bool cVec = !GUARDED || ((reinterpret_cast<unsigned long long>(C) & 15) == 0 && (ldc & 3) == 0 && (N & 3) == 0);
  Tile::template store<GUARDED>(acc, M, N, alpha, beta, C, ldc, rowBase, colBase, place, cVec);
}
