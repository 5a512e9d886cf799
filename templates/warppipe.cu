// gemmtune kernel template: warp-tiled SGEMM with a cp.async pipeline (family "warppipe").
//
// The warp tiling of warptile.cu (BM x BN per block, WM x WN per warp in WMITER x WNITER
// sub-tiles, TM x TN per thread in each; A and B k-major in shared memory whatever the layout,
// A in rows of BM + 4 floats, B in rows of BN, or BN + 4 when TRANS_B; fragments read as float4
// and double-buffered in registers), but k tiles reach shared memory through a STAGES-deep
// cp.async pipeline (sm_80+) instead of staging registers: STAGES - 1 tiles are in flight while
// one is multiplied, one barrier per k tile, and no registers hold tiles on their way. An operand
// stored with k contiguous (A for op N, B for op T) is copied one float at a time into its
// transposed place: the lanes of a warp copy KC (8, or 4 where BK is not a multiple of 8)
// consecutive k of 32 / KC rows, so the global reads are whole 32-byte sectors and, with the
// + 4 row stride, the shared-memory writes fall in 32 different banks (BM % 32 == 0; for B,
// BN % 8 == 0). One stored with M or N contiguous (A for op T, B for op N) is copied 16 bytes at
// a time (the guarded form too where it is 16-byte aligned and its ld % 4 == 0, zero-filling
// past M or N), otherwise one float at a time.
//
// | parameter | meaning                                              | constraints                          |
// |-----------|------------------------------------------------------|--------------------------------------|
// | BM .. THREADS | as warptile.cu                                   | as warptile.cu                       |
// | STAGES    | k tiles in shared memory (in flight + multiplied)   | >= 2                                 |
// | GUARDED   | true: any shape/alignment; false: see below          | -                                    |
// | TRANS_A, TRANS_B | how A and B are stored, as warptile.cu        | -                                    |
//
// Preconditions (enforced by the launcher):
//   both forms: as warptile.cu (M, N, K >= 1; lda, ldb >= the stored row length, ldc >= N;
//               A, B, C 4-byte aligned; each operand with one tile of slack < 2^31 elements).
//   GUARDED == false additionally: M % BM == 0, N % BN == 0, K % BK == 0; A, B and C 16-byte
//               aligned; lda, ldb and ldc multiples of 4 (16-byte copies of the operands stored
//               with M or N contiguous, float4 loads/stores of C).
//   GUARDED == true: nothing more. A copy of an element outside A or B reads nothing and fills a
//               zero (cp.async with a short source size), so the k tail needs no special case; an
//               operand stored with M or N contiguous is copied 16 bytes at a time where it is
//               16-byte aligned and its ld % 4 == 0; C stores are bounds-checked, float4 where C
//               is 16-byte aligned, ldc % 4 == 0 and N % 4 == 0 (decided once per block: every
//               block of a batch decides alike).
// Batches: blockIdx.z is the batch, as warptile.cu.
// Threads per block: THREADS. Grid: (ceil(N / BN), ceil(M / BM), batches), blockIdx.x over N.
// Dynamic shared memory: STAGES * BK * (BM + 4 + BN + (TRANS_B ? 4 : 0)) * 4 bytes (above 48 KiB
// the launcher opts in).
// Contract shared by every gemmtune template: row-major C = alpha * op(A) * op(B) + beta * C with
// op(A) M x K (lda), op(B) K x N (ldb), C M x N (ldc); beta == 0 never reads C.
// Includes warp_tile.cuh (the warp tiling, its fragment multiply, epilogue and batch selection;
// it includes batch.cuh) and cp_async.cuh (the cp.async copies), family headers.

#include "cp_async.cuh"
#include "warp_tile.cuh"

// The copies of one operand's k tile at k0 into shared memory `s` (k-major: BK rows of KS floats),
// one function per way the operand can be stored. EXT is its width (M for A, N for B), base the
// block's first row or column of it, ext the matrix's (M or N). A copy of an element outside the
// operand (guarded form) reads nothing and fills a zero, its address never formed: (ext + tile)
// rows of ld may not fit 32-bit offsets.

// Stored EXT rows of k (k contiguous: A for op(A) = N, B for op(B) = T), copied one float at a
// time into its transposed place: the lanes of a warp copy KC (8, or 4 where BK is not a multiple
// of 8) consecutive k of 32 / KC rows, so the global reads are whole 32-byte sectors and, with a
// row stride KS of 4 modulo 8 floats (KS / 4 odd: EXT % 8 == 0 with the + 4 padding), the shared
// writes of KC = 8 fall in 32 different banks.
template <int EXT, int BK, int KS, int THREADS, bool GUARDED>
__device__ __forceinline__ void warppipeCopyKMajor(float* s, const float* src, int ld, int base, int ext, int k0, int K, int tid) {
  constexpr int KC = BK % 8 == 0 ? 8 : 4;
  constexpr int kIters = (EXT * BK + THREADS - 1) / THREADS;
  // The guarded form's copy loops unroll by 4 only: fully unrolled, ptxas keeps every copy's
  // address live across the k loop.
  constexpr int kUnroll = GUARDED ? 4 : kIters;
#pragma unroll kUnroll
  for (int it = 0; it < kIters; ++it) {
    const int slot = tid + it * THREADS;
    if ((EXT * BK) % THREADS == 0 || slot < EXT * BK) {
      const int kLo = slot % KC, rest = slot / KC;
      const int r = rest % EXT, k = (rest / EXT) * KC + kLo;
      const bool on = !GUARDED || (base + r < ext && k0 + k < K);
      cpAsync4(s + k * KS + r, on ? src + (base + r) * ld + k0 + k : src, on);
    }
  }
}

// Stored k rows of EXT (EXT contiguous: A for op(A) = T, B for op(B) = N), copied 16 bytes at a
// time (src 16-byte aligned and ld % 4 == 0; always so in the unguarded form); the guarded form
// copies only the floats before ext of a row's last chunk.
template <int EXT, int BK, int KS, int THREADS, bool GUARDED>
__device__ __forceinline__ void warppipeCopyRows16(float* s, const float* src, int ld, int base, int ext, int k0, int K, int tid) {
  constexpr int kSlots = BK * EXT / 4;
  constexpr int kIters = (kSlots + THREADS - 1) / THREADS;
  constexpr int kUnroll = GUARDED ? 4 : kIters;
#pragma unroll kUnroll
  for (int it = 0; it < kIters; ++it) {
    const int slot = tid + it * THREADS;
    if (kSlots % THREADS == 0 || slot < kSlots) {
      const int kr = slot / (EXT / 4), cq = (slot % (EXT / 4)) * 4;
      if constexpr (!GUARDED) {
        cpAsync16(s + kr * KS + cq, src + (k0 + kr) * ld + base + cq);
      } else {
        const int left = k0 + kr < K ? min(max(ext - (base + cq), 0), 4) : 0;
        cpAsync16Part(s + kr * KS + cq, left > 0 ? src + (k0 + kr) * ld + base + cq : src, 4 * left);
      }
    }
  }
}

// The same operand one float at a time: the guarded form where 16-byte copies are not safe.
template <int EXT, int BK, int KS, int THREADS>
__device__ __forceinline__ void warppipeCopyRows4(float* s, const float* src, int ld, int base, int ext, int k0, int K, int tid) {
  constexpr int kSlots = BK * EXT;
  constexpr int kIters = (kSlots + THREADS - 1) / THREADS;
#pragma unroll 4
  for (int it = 0; it < kIters; ++it) {
    const int slot = tid + it * THREADS;
    if (kSlots % THREADS == 0 || slot < kSlots) {
      const int kr = slot / EXT, c = slot % EXT;
      const bool on = k0 + kr < K && base + c < ext;
      cpAsync4(s + kr * KS + c, on ? src + (k0 + kr) * ld + base + c : src, on);
    }
  }
}

template <int BM, int BN, int BK, int WM, int WN, int WNITER, int TM, int TN, int THREADS, int STAGES, bool GUARDED, bool TRANS_A, bool TRANS_B>
__global__ void __launch_bounds__(THREADS)
    sgemm_warppipe(int M, int N, int K, float alpha, const float* __restrict__ A0, int lda,
                   const float* __restrict__ B0, int ldb, float beta, float* __restrict__ C0, int ldc, GemmtuneBatch batch) {
  // B stored with k contiguous (op T) is copied like A stored so: padded rows (see warp_tile.cuh).
  using Tile = WarpTile<BM, BN, BK, WM, WN, WNITER, TM, TN, THREADS, TRANS_B>;  // its static_asserts check the tiling
  static_assert(BM % 32 == 0, "BM must be a multiple of 32 (the BM + 4 row stride spreads A's copies over the banks)");
  static_assert(BN % 4 == 0, "BN must be a multiple of 4 (16-byte copies of B)");
  static_assert(STAGES >= 2, "STAGES must be at least 2 (one tile lands while another is multiplied)");
  constexpr int kSA = Tile::kSA, kSB = Tile::kSB, kStage = Tile::kStage;

  const float* A = A0;  // this block's matrices: blockIdx.z is the batch
  const float* B = B0;
  float* C = C0;
  warpTileSelectBatch(batch, A, B, C);

  extern __shared__ float4 smem4[];
  float* const smem = reinterpret_cast<float*>(smem4);

  const int tid = threadIdx.x;
  const int rowBase = blockIdx.y * BM, colBase = blockIdx.x * BN;

  // An operand stored with its M or N contiguous goes in 16-byte copies: always unguarded;
  // guarded where it is 16-byte aligned and its ld % 4 == 0 (decided once per launch).
  const bool aVec = !GUARDED || ((reinterpret_cast<unsigned long long>(A) & 15) == 0 && (lda & 3) == 0);
  const bool bVec = !GUARDED || ((reinterpret_cast<unsigned long long>(B) & 15) == 0 && (ldb & 3) == 0);

  const int nTiles = (K + BK - 1) / BK;  // the unguarded form: K % BK == 0
  // Starts the copies of k tile `tile` into `stage`, then closes a commit group (an empty one past
  // the last tile, so that every iteration waits for the same group count).
  auto issue = [&](int tile, float* stage) {
    if (tile < nTiles) {
      float* const As = stage;
      float* const Bs = stage + BK * kSA;
      const int k0 = tile * BK;
      if constexpr (!TRANS_A) warppipeCopyKMajor<BM, BK, kSA, THREADS, GUARDED>(As, A, lda, rowBase, M, k0, K, tid);
      else if (aVec) warppipeCopyRows16<BM, BK, kSA, THREADS, GUARDED>(As, A, lda, rowBase, M, k0, K, tid);
      else if constexpr (GUARDED) warppipeCopyRows4<BM, BK, kSA, THREADS>(As, A, lda, rowBase, M, k0, K, tid);
      if constexpr (TRANS_B) warppipeCopyKMajor<BN, BK, kSB, THREADS, GUARDED>(Bs, B, ldb, colBase, N, k0, K, tid);
      else if (bVec) warppipeCopyRows16<BN, BK, kSB, THREADS, GUARDED>(Bs, B, ldb, colBase, N, k0, K, tid);
      else if constexpr (GUARDED) warppipeCopyRows4<BN, BK, kSB, THREADS>(Bs, B, ldb, colBase, N, k0, K, tid);
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
