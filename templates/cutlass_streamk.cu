// gemmtune kernel template: CUTLASS's SIMT SGEMM main loop, the work spread stream-K over one
// wave of blocks (family "streamk").
//
// Why: a tiled GEMM runs in whole waves of tiles, so a C of 143 tiles of 128×128 on 132 SMs takes
// two waves for 1.08 waves of work (measured on an H100 at 1619×1367×1092: our best tiled kernel
// ran at 0.71× cuBLAS). Stream-K (Osama et al., 2023) gives every block of one wave the same
// number of k steps out of all tiles' k steps in a row, so a tile may be computed by two or more
// blocks: each block that holds a tile's later k steps stores its partial tile in the workspace
// and raises its flag; the block that holds the tile's first k steps waits for those flags, adds
// the partials in block order (the same sum bit for bit every run on one GPU) and writes
// alpha·sum + beta·C. Tiles a block holds whole are written as any tiled kernel writes them.
//
// The main loop and its operand iterators are CUTLASS's (device::Gemm's GemmKernel::Mma, as in
// templates/cutlass_clusterk.cu), run once per tile segment over the segment's k range; the
// accumulators leave through the warp's accumulator iterator into a row-major tile in shared
// memory, from which they go to the workspace or to C.
//
// Launch contract (generator/families/CutlassStreamK.cpp makes the plan): the gemmtune argument
// list (M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, batch) and the workspace: one int flag per
// block, zero, in the workspace's zeroed part (each is raised once and lowered by the block that
// reads it, so a completed launch leaves them zero), and from byte kZeroedWorkspaceBytes one
// TBM×TBN partial tile per block (scratch, written before it is read). block = 32 × (TBM/WM) ×
// (TBN/WN) threads; dynamic shared memory = the larger of the pipeline's STAGES × (TBM + TBN) × TBK
// × 4 bytes and the tile's TBM × (TBN + 4) × 4 bytes; grid = (G, 1, 1) with 1 ≤ G ≤
// GEMMTUNE_STREAMK_MAX_BLOCKS: the device layer launches one wave (KernelLaunch::oneWave), and the
// work is divided by gridDim.x, so any G computes the same product. Blocks beyond the number of
// k steps compute nothing. A flag is awaited only by a block of lower index, and every block
// raises its flag before it waits for any, so the blocks of a wave cannot wait on each other in a
// circle. Tiles run in groups of SWIZZLE tile columns, row by row within a group (L2 reuse);
// batches are outermost.
#include "cutlass_gemm.cuh"

// The most blocks a launch may have (the plan's bound, generator/families/CutlassStreamK.cpp's
// kStreamKMaxBlocks): the workspace holds this many flags and partial tiles.
#define GEMMTUNE_STREAMK_MAX_BLOCKS 512
// The workspace's zeroed prefix (problem/LaunchPlan.hpp's kZeroedWorkspaceBytes); partials lie past it.
#define GEMMTUNE_STREAMK_PARTIALS_OFFSET (64LL << 20)

template <int TBM_, int TBN_, int TBK_, int WM, int WN, int STAGES, bool TRANS_A, bool TRANS_B>
struct gemmtune_streamk_types {
  static constexpr int TBM = TBM_, TBN = TBN_, TBK = TBK_;
  using LayoutA = gemmtune_cutlass_layout<TRANS_A>;
  using LayoutB = gemmtune_cutlass_layout<TRANS_B>;
  using Gemm = cutlass::gemm::device::Gemm<
      float, LayoutA, float, LayoutB, float, cutlass::layout::RowMajor, float, cutlass::arch::OpClassSimt,
      cutlass::arch::Sm80, cutlass::gemm::GemmShape<TBM, TBN, TBK>, cutlass::gemm::GemmShape<WM, WN, TBK>,
      cutlass::gemm::GemmShape<1, 1, 1>, cutlass::epilogue::thread::LinearCombination<float, 1, float, float>,
      cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<1>, STAGES, 1, 1, /*SplitKSerial=*/false>;
  using Mma = typename Gemm::GemmKernel::Mma;
  static constexpr int kThreads = 32 * (TBM / WM) * (TBN / WN);
  static constexpr int kTileLd = TBN + 4;  // padded rows: a warp's accumulator store spans 4 rows
  static constexpr int kPipelineBytes = STAGES * (TBM + TBN) * TBK * 4;
  static constexpr int kTileBytes = TBM * kTileLd * 4;
  static constexpr int kSmemBytes = kPipelineBytes > kTileBytes ? kPipelineBytes : kTileBytes;
  static constexpr int kQuads = TBN / 4;  // float4 columns of a tile row
  static_assert(TBN % 4 == 0, "tiles are moved four floats at a time");
};

// The first k step (of all tiles' k steps in a row) that block `block` of `blocks` computes.
__device__ __forceinline__ long long gemmtune_streamk_begin(long long block, long long blocks, long long steps) {
  return block * steps / blocks;
}

// Tile `t` of the launch (batches outermost, then groups of `swizzle` tile columns, rows within a group).
struct GemmtuneStreamKTile {
  int batch, row, column;
};
__device__ __forceinline__ GemmtuneStreamKTile gemmtune_streamk_tile(long long t, int tilesM, int tilesN, int swizzle) {
  const long long perBatch = static_cast<long long>(tilesM) * tilesN;
  const int inBatch = static_cast<int>(t % perBatch);
  const int group = inBatch / (tilesM * swizzle), inGroup = inBatch % (tilesM * swizzle);
  const int width = min(swizzle, tilesN - group * swizzle);
  return {static_cast<int>(t / perBatch), inGroup / width, group * swizzle + inGroup % width};
}

__device__ __forceinline__ void gemmtune_streamk_raise(int* flag) {
  __threadfence();  // the block's partial (ordered before this thread by the barrier) first
  asm volatile("st.release.gpu.global.b32 [%0], %1;" ::"l"(flag), "r"(1) : "memory");
}

__device__ __forceinline__ void gemmtune_streamk_await(int* flag) {
  int v = 0;
  for (;;) {
    asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(flag) : "memory");
    if (v) break;
    __nanosleep(32);
  }
  *flag = 0;  // lowered by its only reader: a completed launch leaves every flag zero
}

// tile (row-major, kTileLd apart) to or from a TBM×TBN partial in global memory (L2, not L1:
// another SM wrote it).
template <class Types>
__device__ __forceinline__ void gemmtune_streamk_store_partial(const float* tile, float* partial) {
  for (int i = threadIdx.x; i < Types::TBM * Types::kQuads; i += Types::kThreads) {
    const int r = i / Types::kQuads, c = (i % Types::kQuads) * 4;
    __stcg(reinterpret_cast<float4*>(partial + r * Types::TBN + c),
           *reinterpret_cast<const float4*>(tile + r * Types::kTileLd + c));
  }
}
template <class Types>
__device__ __forceinline__ void gemmtune_streamk_add_partial(float* tile, const float* partial) {
  for (int i = threadIdx.x; i < Types::TBM * Types::kQuads; i += Types::kThreads) {
    const int r = i / Types::kQuads, c = (i % Types::kQuads) * 4;
    const float4 p = __ldcg(reinterpret_cast<const float4*>(partial + r * Types::TBN + c));
    float4& t = *reinterpret_cast<float4*>(tile + r * Types::kTileLd + c);
    t.x += p.x, t.y += p.y, t.z += p.z, t.w += p.w;
  }
}

// alpha·tile + beta·C into C's tile at (rowBase, colBase), within C (beta == 0 never reads C), as
// CUTLASS's LinearCombination rounds: fma(alpha, sum, beta·C).
template <class Types>
__device__ __forceinline__ void gemmtune_streamk_write(const float* tile, int rowBase, int colBase, int M, int N,
                                                       float alpha, float beta, float* C, int ldc) {
  for (int i = threadIdx.x; i < Types::TBM * Types::kQuads; i += Types::kThreads) {
    const int r = i / Types::kQuads, c = (i % Types::kQuads) * 4;
    const int row = rowBase + r;
    if (row >= M || colBase + c >= N) continue;
    const float* v = tile + r * Types::kTileLd + c;
    float* out = C + static_cast<long long>(row) * ldc + colBase + c;
#pragma unroll
    for (int j = 0; j < 4; ++j)
      if (colBase + c + j < N) out[j] = beta == 0.0f ? alpha * v[j] : fmaf(alpha, v[j], beta * out[j]);
  }
}

// One segment: k steps [stepBegin, stepEnd) of tile `at`, accumulated into `tile` in shared memory.
template <class Types>
__device__ __forceinline__ void gemmtune_streamk_segment(const typename Types::Mma::IteratorA::Params& paramsA,
                                                         const typename Types::Mma::IteratorB::Params& paramsB,
                                                         const float* A, const float* B, int M, int N, int K,
                                                         GemmtuneStreamKTile at, int stepBegin, int stepEnd,
                                                         float* tile) {
  using Mma = typename Types::Mma;
  extern __shared__ int4 gemmtune_cutlass_smem[];
  const int kBegin = stepBegin * Types::TBK, kEnd = min(K, stepEnd * Types::TBK);
  typename Mma::IteratorA iteratorA(paramsA, const_cast<float*>(A), {M, kEnd}, threadIdx.x,
                                    {at.row * Types::TBM, kBegin});
  typename Mma::IteratorB iteratorB(paramsB, const_cast<float*>(B), {kEnd, N}, threadIdx.x,
                                    {kBegin, at.column * Types::TBN});
  const int warp = cutlass::canonical_warp_idx_sync(), lane = threadIdx.x % 32;
  Mma mma(*reinterpret_cast<typename Mma::SharedStorage*>(gemmtune_cutlass_smem), threadIdx.x, warp, lane);
  typename Mma::FragmentC accumulators;
  accumulators.clear();
  mma(stepEnd - stepBegin, accumulators, iteratorA, iteratorB, accumulators);
  __syncthreads();  // the pipeline's shared memory becomes the tile
  using WarpCount = typename Mma::WarpCount;
  const int warpM = warp % WarpCount::kM, warpN = (warp / WarpCount::kM) % WarpCount::kN;
  typename Mma::Operator::IteratorC store({tile, Types::kTileLd}, lane);
  store.add_tile_offset({warpM, warpN});
  store.store(accumulators);
  __syncthreads();
}

template <class Types, int SWIZZLE>
__device__ __forceinline__ void gemmtune_streamk_gemm(int M, int N, int K, float alpha, const float* A, int lda,
                                                      const float* B, int ldb, float beta, float* C, int ldc,
                                                      GemmtuneBatch batch, int* workspace) {
  static_assert(sizeof(typename Types::Mma::SharedStorage) <= Types::kSmemBytes,
                "CUTLASS's main-loop shared storage exceeds the plan's dynamic shared memory");
  // A launch the plan did not make computes nothing (verification then fails loudly).
  if (gridDim.y != 1 || gridDim.z != 1 || gridDim.x > GEMMTUNE_STREAMK_MAX_BLOCKS || batch.count < 1 || !workspace)
    return;
  extern __shared__ int4 gemmtune_cutlass_smem[];
  float* tile = reinterpret_cast<float*>(gemmtune_cutlass_smem);
  const int tilesM = (M + Types::TBM - 1) / Types::TBM, tilesN = (N + Types::TBN - 1) / Types::TBN;
  const int stepsPerTile = (K + Types::TBK - 1) / Types::TBK;
  const long long steps = static_cast<long long>(tilesM) * tilesN * batch.count * stepsPerTile;
  const long long blocks = min(static_cast<long long>(gridDim.x), steps);  // every block at least one step
  const long long self = blockIdx.x;
  if (self >= blocks) return;
  int* flags = workspace;
  float* partials = reinterpret_cast<float*>(reinterpret_cast<char*>(workspace) + GEMMTUNE_STREAMK_PARTIALS_OFFSET);
  const typename Types::Mma::IteratorA::Params paramsA{typename Types::LayoutA(lda)};
  const typename Types::Mma::IteratorB::Params paramsB{typename Types::LayoutB(ldb)};

  const long long end = gemmtune_streamk_begin(self + 1, blocks, steps);
  for (long long step = gemmtune_streamk_begin(self, blocks, steps); step < end;) {
    const long long t = step / stepsPerTile, tileBegin = t * stepsPerTile, tileEnd = tileBegin + stepsPerTile;
    const long long segmentEnd = min(end, tileEnd);
    const GemmtuneStreamKTile at = gemmtune_streamk_tile(t, tilesM, tilesN, SWIZZLE);
    const float *a = A, *b = B;
    float* c = C;
    gemmtune_select_batch(batch, at.batch, a, b, c);
    gemmtune_streamk_segment<Types>(paramsA, paramsB, a, b, M, N, K, at, static_cast<int>(step - tileBegin),
                                    static_cast<int>(segmentEnd - tileBegin), tile);
    if (step != tileBegin) {  // later k steps of a tile begun by a block before this one
      gemmtune_streamk_store_partial<Types>(tile, partials + self * Types::TBM * Types::TBN);
      __syncthreads();
      if (threadIdx.x == 0) gemmtune_streamk_raise(flags + self);
    } else {
      // The tile's first k steps: add the later blocks' partials of it, in block order.
      for (long long other = self + 1; segmentEnd < tileEnd && other < blocks &&
                                       gemmtune_streamk_begin(other, blocks, steps) < tileEnd;
           ++other) {
        if (threadIdx.x == 0) gemmtune_streamk_await(flags + other);
        __syncthreads();
        gemmtune_streamk_add_partial<Types>(tile, partials + other * Types::TBM * Types::TBN);
        __syncthreads();
      }
      gemmtune_streamk_write<Types>(tile, at.row * Types::TBM, at.column * Types::TBN, M, N, alpha, beta, c, ldc);
    }
    __syncthreads();  // the tile's shared memory becomes the next segment's pipeline
    step = segmentEnd;
  }
}

template <int TBM, int TBN, int TBK, int WM, int WN, int STAGES, int SWIZZLE, bool GUARDED, bool TRANS_A, bool TRANS_B>
__global__ void __launch_bounds__(gemmtune_streamk_types<TBM, TBN, TBK, WM, WN, STAGES, TRANS_A, TRANS_B>::kThreads)
    sgemm_cutlass_streamk(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                          float beta, float* C, int ldc, GemmtuneBatch batch, int* workspace) {
  static_assert(STAGES >= 3, "STAGES >= 3: two stages select CUTLASS's double-buffered main loop");
  gemmtune_streamk_gemm<gemmtune_streamk_types<TBM, TBN, TBK, WM, WN, STAGES, TRANS_A, TRANS_B>, SWIZZLE>(
      M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, batch, workspace);
}
