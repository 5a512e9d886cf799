// gemmtune kernel template: small C tiles with K split across blocks (family "thin").
//
// For the shapes large tiles leave the GPU idle on: M or N small (down to a GEMV, M = 1 or
// N = 1), or few C tiles over a long K. Each block computes a BM x BN tile of C (8 to 128 on a
// side) over one slice of K of one batch; gridDim.z is batch.count * slices, blockIdx.z =
// batch * slices + slice. With one slice the block writes C itself. With several, each block
// stores its partial tile in its batch's workspace and counts itself in its tile's counter; the
// last block of a tile to arrive adds the slices' partials in slice order (so the same inputs
// give the same bits on every run, whichever block comes last), applies alpha and beta once, and
// clears its tile's counter and partial tiles for the next launch.
//
// A sits row-major in shared memory (rows of BK + 4 floats): the inner loop reads four k steps of
// one row as a float4, and thread rows are interleaved (thread row ty owns rows ty, ty + BM/TM,
// ...), so the rows a warp reads at once are adjacent and fall in different banks. B sits
// row-major (rows of kSB floats: BN, padded for op T), read as float4 where TN is a multiple of
// 4. Tiles reach shared memory through a STAGES-deep cp.async pipeline (sm_80+): no staging
// registers, and a guarded copy out of bounds reads nothing and fills zeros. An operand stored as
// its tile is (A op N, B op N): the unguarded form copies 16 bytes at a time, the guarded form
// single elements. An operand stored transposed to its tile (A op T: K rows of M; B op T: N rows
// of K) is copied an element at a time (gemmtune_thin_copy_transposed): groups of 8 lanes read
// 32 contiguous bytes of one stored row, 4 rows per warp, and the tile's row stride, four times
// an odd number (A: BK + 4 where 8 | BK; B: kSB), puts the warp's 32 stores in 32 different
// banks. The unguarded form stores C as float4 where TN allows.
//
// | parameter | meaning                                         | constraints                      |
// |-----------|-------------------------------------------------|----------------------------------|
// | BM, BN    | C tile per block (rows, columns)                | TM | BM, TN | BN, 4 | BN         |
// | BK        | depth of the A and B tiles in shared memory     | multiple of 4                    |
// | TM, TN    | results per thread (rows, columns)              | TN 1, 2 or a multiple of 4       |
// | STAGES    | k tiles in flight in shared memory              | at least 2                       |
// | GUARDED   | true: any shape and alignment; false: below     | -                                |
// | TRANS_A   | A stored as K rows of M (lda >= M), else M x K  | -                                |
// | TRANS_B   | B stored as N rows of K (ldb >= K), else K x N  | -                                |
//
// Threads per block: (BM / TM) * (BN / TN), whole warps. Grid: (ceil(M / BM), ceil(N / BN),
// batch.count * slices), blockIdx.x over M. Dynamic shared memory:
// STAGES * (BM * (BK + 4) + BK * kSB) * 4 + 16 bytes, kSB = BN for op(B) = N, else
// gemmtune_thin_stride_b(BN).
// Workspace (slices > 1): per batch, in batch order, a counter per C tile (gridDim.x * gridDim.y
// unsigned ints, rounded up to 64), then slices * tiles * BM * BN floats of partial sums (all
// batches together below 2^31 floats: 32-bit offsets); all zeros before the launch, all zeros
// again after it (the last block of a tile clears what its tile used); unused with one slice
// (may be null).
// Preconditions, both forms: M, N, K >= 1; lda, ldb >= the stored row length, ldc >= N; 4-byte
// aligned A, B, C; (stored rows + one tile) * ld below 2^31 for A and B, and (M + BM) * ldc.
// GUARDED == false additionally: BM | M, BN | N, BK | K; A, B, C 16-byte aligned; lda, ldb, ldc
// multiples of 4.
// Contract shared by every gemmtune template: row-major C = alpha * op(A) * op(B) + beta * C, C
// M x N (ldc); beta == 0 never reads C. Batch b reads and writes the matrices
// gemmtune_select_batch gives.
// Includes cp_async.cuh (the cp.async copies; a family header) and batch.cuh.

#include "cp_async.cuh"
#include "batch.cuh"

// Row stride (floats) of B's tile for op(B) = T: at least BN + 4, a multiple of 4 (float4 reads)
// with an odd quotient, so that 8 consecutive k rows start in 8 different bank quads.
__host__ __device__ constexpr int gemmtune_thin_stride_b(int bn) { return (bn / 4) % 2 == 0 ? bn + 4 : bn + 8; }

// Issues one thread's cp.async copies of a tile stored transposed to its shared layout: element
// (g, h) of the tile (g < G, h < H) is src[(hBase + h) * ld + gBase + g] in global memory (g
// contiguous) and dst[g * S + h] in shared memory. Groups of GC lanes take GC consecutive g of
// one h (GC * 4 contiguous bytes); the groups of a warp take consecutive h. Where the tile is
// not a multiple of THREADS copies, the last trip is predicated off. Guarded: elements with
// gBase + g >= gLimit or hBase + h >= hLimit read nothing and become zeros.
template <int G, int H, int GC, int THREADS, int S, bool GUARDED>
__device__ __forceinline__ void gemmtune_thin_copy_transposed(float* dst, const float* src, int ld, int gBase, int hBase,
                                                            int gLimit, int hLimit, int tid) {
  static_assert(G % GC == 0 && THREADS % GC == 0, "GC must divide the tile's extent and the thread count");
  constexpr int kLines = G / GC * H;             // (group of GC g, h) pairs of the tile
  constexpr int kStep = THREADS / GC;            // pairs the block covers per trip
  constexpr int kTrips = (kLines + kStep - 1) / kStep;
  constexpr int kUnroll = GUARDED ? 4 : kTrips;  // as the template's own guarded copies (see there)
  const int gIn = tid % GC, line0 = tid / GC;    // this thread's g within its group, first pair
  // Pair line0 + t * kStep is (group gg, h). Where kStep and H divide one another, h and gg
  // step by constants from the first pair's, so each trip's addresses are fixed offsets.
  const int h0 = line0 % H, g0 = line0 / H * GC + gIn;
  const float* const first = src + (hBase + h0) * ld + gBase + g0;
#pragma unroll kUnroll
  for (int t = 0; t < kTrips; ++t) {
    if (kLines % kStep == 0 || line0 + t * kStep < kLines) {
      int dh, dg;  // this trip's pair relative to the first
      if constexpr (kStep % H == 0) {
        dh = 0, dg = t * (kStep / H) * GC;
      } else if constexpr (H % kStep == 0) {
        dh = t % (H / kStep) * kStep, dg = t / (H / kStep) * GC;
      } else {
        const int line = line0 + t * kStep;
        dh = line % H - h0, dg = line / H * GC + gIn - g0;
      }
      const bool on = !GUARDED || (gBase + g0 + dg < gLimit && hBase + h0 + dh < hLimit);
      // A copy that reads nothing still gets an address inside the operand.
      cpAsync4(dst + (g0 + dg) * S + h0 + dh, on ? first + dh * ld + dg : src, on);
    }
  }
}

template <int BM, int BN, int BK, int TM, int TN, int STAGES, bool GUARDED, bool TRANS_A, bool TRANS_B>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
    sgemm_thin(int M, int N, int K, float alpha, const float* __restrict__ A, int lda, const float* __restrict__ B,
               int ldb, float beta, float* __restrict__ C, int ldc, GemmtuneBatch batch,
               float* __restrict__ workspace) {
  static_assert(BM % TM == 0 && BN % TN == 0, "TM must divide BM and TN must divide BN");
  static_assert(TN == 1 || TN == 2 || TN % 4 == 0, "TN must be 1, 2 or a multiple of 4 (B fragments are read as float2/float4)");
  static_assert(BK >= 4 && BK % 4 == 0, "BK must be a positive multiple of 4 (A is read four k steps at a time)");
  static_assert(BN % 4 == 0, "BN must be a multiple of 4 (B is loaded as float4 along n)");
  static_assert(STAGES >= 2, "STAGES must be at least 2 (one tile lands while another is multiplied)");
  constexpr int kThreads = (BM / TM) * (BN / TN);
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "(BM/TM)*(BN/TN) threads: whole warps, at most 1024");
  constexpr int kRowStep = BM / TM;     // thread rows: thread row ty owns rows ty + i * kRowStep
  constexpr int kSA = BK + 4;           // row stride of A in shared memory (floats), float4-aligned
  constexpr int kSB = TRANS_B ? gemmtune_thin_stride_b(BN) : BN;  // row stride of B in shared memory (floats)
  constexpr int kStage = BM * kSA + BK * kSB;  // floats per pipeline stage
  // Copies per stage of an operand stored as its tile: float4 slots in the unguarded form, single
  // elements in the guarded form.
  constexpr int kVec = GUARDED ? 1 : 4;
  constexpr int kASlots = BM * BK / kVec, kBSlots = BK * BN / kVec;
  constexpr int kAIters = (kASlots + kThreads - 1) / kThreads, kBIters = (kBSlots + kThreads - 1) / kThreads;

  extern __shared__ float4 smem4[];
  float* const smem = reinterpret_cast<float*>(smem4);
  unsigned* const lastFlag = reinterpret_cast<unsigned*>(smem + STAGES * kStage);

  const int tid = threadIdx.x;
  const int ty = tid / (BN / TN), tx = tid % (BN / TN);
  const int rowBase = blockIdx.x * BM, colBase = blockIdx.y * BN;
  // Grid z is batch-major: blockIdx.z = batch * slices + slice.
  const int slices = gridDim.z / batch.count, slice = blockIdx.z % slices, batchIndex = blockIdx.z / slices;
  {  // this batch's matrices (through plain copies: a reference cannot bind a __restrict__ pointer)
    const float *a = A, *b = B;
    float* c = C;
    gemmtune_select_batch(batch, batchIndex, a, b, c);
    A = a, B = b, C = c;
  }

  // This block's k tiles: the slices share ceil(K / BK) tiles in equal runs (the last ones may
  // be shorter or empty: an empty slice adds zeros).
  const int kTiles = (K + BK - 1) / BK;
  const int perSlice = (kTiles + slices - 1) / slices;
  const int tBegin = slice * perSlice;
  const int tCount = max(0, min(kTiles, tBegin + perSlice) - tBegin);

  // The guarded form's copy loops unroll by 4 only: fully unrolled, ptxas keeps every copy's
  // address live across the whole k loop (up to 255 registers for a 128x8 tile of 64 threads).
  constexpr int kUnroll = GUARDED ? 4 : (kAIters > kBIters ? kAIters : kBIters);
  // Transposed copies: element by element, groups of 8 lanes (fewer where BM or BK is not a
  // multiple of 8) reading contiguous floats.
  constexpr int kGroupA = BM % 8 == 0 ? 8 : BM % 4 == 0 ? 4 : BM % 2 == 0 ? 2 : 1, kGroupB = BK % 8 == 0 ? 8 : 4;
  // Guarded copies where the thread count is a multiple of the tile's row length: a thread's
  // column is fixed and its rows step evenly, so the bounds checks and addresses come from a few
  // values set once (offsets formed only for rows and columns that exist).
  constexpr int kARowStep = kThreads / BK > 0 ? kThreads / BK : 1, kBRowStep = kThreads / BN > 0 ? kThreads / BN : 1;
  const int aRow0 = tid / BK, aK = tid % BK, aRowsLeft = M - rowBase - aRow0;
  const float* const aFirst = A + (aRowsLeft > 0 ? (rowBase + aRow0) * lda + aK : 0);
  const int bRow0 = tid / BN, bCol = tid % BN;
  const bool bColOk = colBase + bCol < N;
  const float* const bFirst = B + (bColOk ? bRow0 * ldb + colBase + bCol : 0);
  // Starts the copies of k tile `tile` into stage `stage`, then closes a commit group (an empty
  // one past the last tile, so that every iteration waits for the same group count).
  auto issue = [&](int tile, int stage) {
    if (tile < tBegin + tCount) {
      float* const As = smem + stage * kStage;
      float* const Bs = As + BM * kSA;
      const int k0 = tile * BK;
      const bool aKOk = k0 + aK < K;
      const float* const aTile = aFirst + k0;
      const float* const bTile = bFirst + k0 * ldb;
      (void)aKOk, (void)aTile, (void)bTile;  // unused by a transposed operand's copies
      if constexpr (TRANS_A) {
        // Element (m, k) at A[k * lda + m]: 8 rows of 4 consecutive k per warp store.
        gemmtune_thin_copy_transposed<BM, BK, kGroupA, kThreads, kSA, GUARDED>(As, A, lda, rowBase, k0, M, K, tid);
      } else {
#pragma unroll kUnroll
        for (int it = 0; it < kAIters; ++it) {
          const int s = tid + it * kThreads;
          if (kASlots % kThreads == 0 || s < kASlots) {
            if constexpr (!GUARDED) {
              const int r = s / (BK / 4), kq = (s % (BK / 4)) * 4;
              cpAsync16(As + r * kSA + kq, A + (rowBase + r) * lda + k0 + kq);
            } else if constexpr (kThreads % BK == 0) {
              // Each thread copies one k column of rows aRow0 + it * kARowStep: its pointer steps.
              const bool on = aKOk && it * kARowStep < aRowsLeft;
              cpAsync4(As + (aRow0 + it * kARowStep) * kSA + aK, on ? aTile + it * kARowStep * lda : A, on);
            } else {
              const int r = s / BK, kk = s % BK;
              const bool on = rowBase + r < M && k0 + kk < K;
              // Offsets only of elements that exist: (M + BM) * lda may not fit in 32 bits.
              cpAsync4(As + r * kSA + kk, on ? A + (rowBase + r) * lda + k0 + kk : A, on);
            }
          }
        }
      }
      if constexpr (TRANS_B) {
        // Element (k, n) at B[n * ldb + k]: 4 columns of 8 consecutive k per warp store.
        gemmtune_thin_copy_transposed<BK, BN, kGroupB, kThreads, kSB, GUARDED>(Bs, B, ldb, k0, colBase, K, N, tid);
      } else {
#pragma unroll kUnroll
        for (int it = 0; it < kBIters; ++it) {
          const int s = tid + it * kThreads;
          if (kBSlots % kThreads == 0 || s < kBSlots) {
            if constexpr (!GUARDED) {
              const int kr = s / (BN / 4), cq = (s % (BN / 4)) * 4;
              cpAsync16(Bs + s * 4, B + (k0 + kr) * ldb + colBase + cq);
            } else if constexpr (kThreads % BN == 0) {
              // Each thread copies one column of k rows bRow0 + it * kBRowStep.
              const bool on = bColOk && k0 + bRow0 + it * kBRowStep < K;
              cpAsync4(Bs + (bRow0 + it * kBRowStep) * BN + bCol, on ? bTile + it * kBRowStep * ldb : B, on);
            } else {
              const int kr = s / BN, c = s % BN;
              const bool on = k0 + kr < K && colBase + c < N;
              cpAsync4(Bs + s, on ? B + (k0 + kr) * ldb + colBase + c : B, on);
            }
          }
        }
      }
    }
    cpAsyncCommit();
  };

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) issue(tBegin + s, s);
  for (int t = 0; t < tCount; ++t) {
    cpAsyncWait<STAGES - 2>();  // tile t has landed (this thread's copies)
    __syncthreads();  // ... everyone's; and every thread is done with the stage refilled next
    issue(tBegin + t + STAGES - 1, (t + STAGES - 1) % STAGES);
    const float* As = smem + (t % STAGES) * kStage;
    const float* Bs = As + BM * kSA;
#pragma unroll
    for (int k = 0; k < BK; k += 4) {
      float4 a[TM];
#pragma unroll
      for (int i = 0; i < TM; ++i) a[i] = *reinterpret_cast<const float4*>(As + (ty + i * kRowStep) * kSA + k);
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        float b[TN];
        const float* bRow = Bs + (k + q) * kSB + tx * TN;
        if constexpr (TN % 4 == 0) {
#pragma unroll
          for (int j = 0; j < TN; j += 4) {
            const float4 v = *reinterpret_cast<const float4*>(bRow + j);
            b[j] = v.x, b[j + 1] = v.y, b[j + 2] = v.z, b[j + 3] = v.w;
          }
        } else if constexpr (TN == 2) {
          const float2 v = *reinterpret_cast<const float2*>(bRow);
          b[0] = v.x, b[1] = v.y;
        } else {
          b[0] = bRow[0];
        }
#pragma unroll
        for (int i = 0; i < TM; ++i) {
          const float av = q == 0 ? a[i].x : q == 1 ? a[i].y : q == 2 ? a[i].z : a[i].w;
#pragma unroll
          for (int j = 0; j < TN; ++j) acc[i][j] += av * b[j];
        }
      }
    }
  }
  cpAsyncWaitAll();  // no copy may outlive the block (empty groups only, but to be sure)

  // C[row][col] = alpha * sum + beta * C[row][col], for this thread's (i, j) where it exists.
  auto writeC = [&](int i, int j, float sum) {
    const int row = rowBase + ty + i * kRowStep, col = colBase + tx * TN + j;
    if (GUARDED && (row >= M || col >= N)) return;
    float* c = C + row * ldc + col;
    *c = beta == 0.0f ? alpha * sum : alpha * sum + beta * *c;
  };

  if (slices == 1) {
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      if constexpr (!GUARDED && TN % 4 == 0) {
        float* c = C + (rowBase + ty + i * kRowStep) * ldc + colBase + tx * TN;
#pragma unroll
        for (int j = 0; j < TN; j += 4) {
          float4 v = make_float4(alpha * acc[i][j], alpha * acc[i][j + 1], alpha * acc[i][j + 2], alpha * acc[i][j + 3]);
          if (beta != 0.0f) {
            const float4 old = *reinterpret_cast<const float4*>(c + j);
            v.x += beta * old.x, v.y += beta * old.y, v.z += beta * old.z, v.w += beta * old.w;
          }
          *reinterpret_cast<float4*>(c + j) = v;
        }
      } else {
#pragma unroll
        for (int j = 0; j < TN; ++j) writeC(i, j, acc[i][j]);
      }
    }
    return;
  }

  // Split K: partial tile out, count in; the last block of this tile reduces in slice order.
  // Each batch has its own counters and partials, one region after another.
  const int tiles = gridDim.x * gridDim.y, tile = blockIdx.y * gridDim.x + blockIdx.x;
  const int counterFloats = (tiles + 63) / 64 * 64;
  float* const region = workspace + batchIndex * (counterFloats + slices * tiles * (BM * BN));
  unsigned* const counters = reinterpret_cast<unsigned*>(region);
  float* const partials = region + counterFloats;
  auto partialAt = [&](int ofSlice, int i, int j) {
    return (ofSlice * tiles + tile) * (BM * BN) + (ty + i * kRowStep) * BN + tx * TN + j;
  };
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) partials[partialAt(slice, i, j)] = acc[i][j];
  __threadfence();  // the partials are visible device-wide before this block is counted
  __syncthreads();
  if (tid == 0) *lastFlag = atomicAdd(counters + tile, 1u) == static_cast<unsigned>(slices - 1) ? 1u : 0u;
  __syncthreads();
  if (*lastFlag == 0) return;
  __threadfence();  // every other slice counted itself after its fence: its partials are visible
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      float sum = 0.0f;
      for (int s = 0; s < slices; ++s) {
        float* const p = partials + partialAt(s, i, j);
        sum += s == slice ? acc[i][j] : __ldcg(p);
        __stcg(p, 0.0f);  // the workspace is all zeros again after the launch (LaunchPlan.hpp)
      }
      writeC(i, j, sum);
    }
  if (tid == 0) counters[tile] = 0;  // zero again for the next launch in this stream
}
