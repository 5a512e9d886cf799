// gemmtune kernel template: CUTLASS's SIMT SGEMM main loop with K split across a thread block
// cluster (family "clusterk", sm_90 and later).
//
// Why: where C has few tiles (1024³ has 64 of 128×128 for 132 SMs), K must be split to fill the
// GPU, and the split costs a reduction. cuBLAS runs a second kernel for it (at 1024³ tn, 9 of its
// 58 µs, measured on an H100); the `cutlass` family's serial split-K makes each slice wait for the
// one before it to add its part into C. Here the SLICES blocks of one C tile form a cluster: each
// computes its share of K into registers as CUTLASS's main loop does, stores that partial tile in
// its own shared memory, and after one cluster barrier every block reduces a 1/SLICES band of the
// tile's rows by reading all the slices' partials through distributed shared memory, in slice
// order (so the result is the same bit for bit every run), and writes alpha·sum + beta·C to C.
// No workspace, no lock, no second kernel, and the slices' epilogues run at the same time.
//
// The main loop and its operand iterators are CUTLASS's (device::Gemm<..., SplitKSerial = false>'s
// GemmKernel::Mma, Params built on the GPU as for the `cutlass` family: templates/cutlass_gemm.cuh);
// the accumulators leave through the warp's own accumulator iterator (Mma::Operator::IteratorC)
// into a row-major tile, so no thread-to-element mapping is written here.
//
// Launch contract (generator/families/CutlassClusterK.cpp makes the plan): the gemmtune argument
// list (M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, batch) and the workspace argument (unused);
// block = 32 × (TBM/WM) × (TBN/WN) threads; dynamic shared memory = the larger of the pipeline's
// STAGES × (TBM + TBN) × TBK × 4 bytes and the partial tile's TBM × (TBN + 4) × 4 bytes; grid = the
// identity swizzle's grid as for `cutlass`, gridDim.z = batch.count × SLICES, layer z being slice
// z % SLICES of batch z / SLICES; clusters of 1 × 1 × SLICES blocks (compiled in: __cluster_dims__),
// so a cluster is one C tile's slices and a block's rank in it is its slice.
#include "cutlass_gemm.cuh"

template <int TBM_, int TBN_, int TBK_, int WM, int WN, int STAGES, int SWIZZLE, int SLICES, bool TRANS_A, bool TRANS_B>
struct gemmtune_clusterk_types {
  static constexpr int TBM = TBM_, TBN = TBN_, TBK = TBK_;
  using Swizzle = gemmtune_batched_swizzle<SWIZZLE>;
  using Gemm = cutlass::gemm::device::Gemm<
      float, gemmtune_cutlass_layout<TRANS_A>, float, gemmtune_cutlass_layout<TRANS_B>, float, cutlass::layout::RowMajor,
      float, cutlass::arch::OpClassSimt, cutlass::arch::Sm80, cutlass::gemm::GemmShape<TBM, TBN, TBK>,
      cutlass::gemm::GemmShape<WM, WN, TBK>, cutlass::gemm::GemmShape<1, 1, 1>,
      cutlass::epilogue::thread::LinearCombination<float, 1, float, float>, Swizzle, STAGES, 1, 1, /*SplitKSerial=*/false>;
  static constexpr int kThreads = 32 * (TBM / WM) * (TBN / WN);
  // Rows of the partial tile are padded by 4 floats: the 4 rows a warp's accumulator store spans
  // then start in different banks.
  static constexpr int kTileLd = TBN + 4;
  static constexpr int kPipelineBytes = STAGES * (TBM + TBN) * TBK * 4;
  static constexpr int kTileBytes = TBM * kTileLd * 4;
  static constexpr int kSmemBytes = kPipelineBytes > kTileBytes ? kPipelineBytes : kTileBytes;
  static_assert(TBM % SLICES == 0, "each slice reduces a whole band of TBM / SLICES rows");
  static_assert(TBN % 4 == 0, "the reduction reads four floats at a time");
};

__device__ __forceinline__ void gemmtune_cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// Four floats at `local` in the shared memory of the cluster's block `rank` (the same offset).
__device__ __forceinline__ float4 gemmtune_cluster_load4(const float* local, unsigned rank) {
  const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(local));
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(addr), "r"(rank));
  float4 v;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(remote)
               : "memory");
  return v;
}

// The sum of the SLICES partial tiles at `tile` (row-major, kTileLd apart) for the band of rows
// this block owns, as alpha·sum + beta·C into C (beta == 0 never reads C).
template <class Types, int SLICES>
__device__ __forceinline__ void gemmtune_clusterk_reduce(const float* tile, unsigned rank, int rowBase, int colBase,
                                                         int M, int N, float alpha, float beta, float* C, int ldc) {
  constexpr int kBand = Types::TBM / SLICES, kQuads = Types::TBN / 4;
  for (int i = threadIdx.x; i < kBand * kQuads; i += Types::kThreads) {
    const int r = static_cast<int>(rank) * kBand + i / kQuads, c = (i % kQuads) * 4;
    const int row = rowBase + r;
    if (row >= M || colBase + c >= N) continue;  // past C's edge: nothing to read or write
    const float* at = tile + r * Types::kTileLd + c;
    float4 parts[SLICES];
#pragma unroll
    for (int q = 0; q < SLICES; ++q) parts[q] = gemmtune_cluster_load4(at, q);
    float4 sum = parts[0];
#pragma unroll
    for (int q = 1; q < SLICES; ++q) sum.x += parts[q].x, sum.y += parts[q].y, sum.z += parts[q].z, sum.w += parts[q].w;
    float* out = C + static_cast<long long>(row) * ldc + colBase + c;
    const float v[4] = {sum.x, sum.y, sum.z, sum.w};
#pragma unroll
    for (int j = 0; j < 4; ++j)
      // As CUTLASS's LinearCombination rounds: fma(alpha, sum, beta·C), C never read when beta is 0.
      if (colBase + c + j < N) out[j] = beta == 0.0f ? alpha * v[j] : fmaf(alpha, v[j], beta * out[j]);
  }
}

template <class Types, int SLICES>
__device__ __forceinline__ void gemmtune_clusterk_gemm(int M, int N, int K, float alpha, const float* A, int lda,
                                                       const float* B, int ldb, float beta, float* C, int ldc,
                                                       GemmtuneBatch batch) {
  using Kernel = typename Types::Gemm::GemmKernel;
  using Mma = typename Kernel::Mma;
  static_assert(Kernel::kThreadCount == Types::kThreads, "threads per block differ from the plan's");
  static_assert(sizeof(typename Mma::SharedStorage) <= Types::kSmemBytes,
                "CUTLASS's main-loop shared storage exceeds the plan's dynamic shared memory");
  extern __shared__ int4 gemmtune_cutlass_smem[];
  const auto& params = gemmtune_cutlass_params<Types>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, batch, nullptr);
  const cutlass::gemm::GemmCoord tile = Types::Swizzle::get_tile_offset(params.swizzle_log_tile);
  // The whole cluster shares the tile and the batch, and the grid its depth, so all of a cluster's
  // blocks leave here or none. A depth of other than SLICES per batch would not match the clusters.
  if (params.grid_tiled_shape.m() <= tile.m() || params.grid_tiled_shape.n() <= tile.n()) return;
  if (gemmtune_cutlass_slices != SLICES) return;

  const int kBegin = tile.k() * params.gemm_k_size;
  const int kEnd = min(params.problem_size.k(), kBegin + params.gemm_k_size);
  const int kIterations = kEnd > kBegin ? (kEnd - kBegin + Types::TBK - 1) / Types::TBK : 0;
  typename Mma::IteratorA iteratorA(params.params_A, params.ref_A.data(), {params.problem_size.m(), kEnd},
                                    threadIdx.x, {tile.m() * Types::TBM, kBegin});
  typename Mma::IteratorB iteratorB(params.params_B, params.ref_B.data(), {kEnd, params.problem_size.n()},
                                    threadIdx.x, {kBegin, tile.n() * Types::TBN});
  const int warp = cutlass::canonical_warp_idx_sync(), lane = threadIdx.x % 32;
  auto& storage = *reinterpret_cast<typename Mma::SharedStorage*>(gemmtune_cutlass_smem);
  Mma mma(storage, threadIdx.x, warp, lane);
  typename Mma::FragmentC accumulators;
  accumulators.clear();
  if (kIterations > 0) mma(kIterations, accumulators, iteratorA, iteratorB, accumulators);

  // The pipeline's shared memory becomes this slice's partial tile. CUTLASS's main loop ends with
  // every copy landed and a barrier after the last stage's reads (MmaMultistage::gemm_iters); this
  // barrier makes that so whatever CUTLASS's loop does (a block with no k tiles runs none).
  __syncthreads();
  float* partial = reinterpret_cast<float*>(gemmtune_cutlass_smem);
  using WarpCount = typename Mma::WarpCount;
  const int warpM = warp % WarpCount::kM, warpN = (warp / WarpCount::kM) % WarpCount::kN;
  typename Mma::Operator::IteratorC store({partial, Types::kTileLd}, lane);
  store.add_tile_offset({warpM, warpN});
  store.store(accumulators);
  gemmtune_cluster_sync();  // every slice's partial tile is complete and visible to the cluster
  gemmtune_clusterk_reduce<Types, SLICES>(partial, static_cast<unsigned>(tile.k()), tile.m() * Types::TBM,
                                          tile.n() * Types::TBN, M, N, alpha, beta, params.ref_D.data(),
                                          params.ref_D.stride(0));
  gemmtune_cluster_sync();  // no block leaves while another still reads its partial tile
}

template <int TBM, int TBN, int TBK, int WM, int WN, int STAGES, int SWIZZLE, int SLICES, bool GUARDED, bool TRANS_A,
          bool TRANS_B>
__global__ void __cluster_dims__(1, 1, SLICES)
    __launch_bounds__(gemmtune_clusterk_types<TBM, TBN, TBK, WM, WN, STAGES, SWIZZLE, SLICES, TRANS_A, TRANS_B>::kThreads)
        sgemm_cutlass_clusterk(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                               float beta, float* C, int ldc, GemmtuneBatch batch, int* /*workspace*/) {
  static_assert(STAGES >= 3, "STAGES >= 3: two stages select CUTLASS's double-buffered main loop");
  static_assert(SLICES >= 2 && SLICES <= 8, "2 to 8 slices: a portable cluster holds at most 8 blocks");
  gemmtune_clusterk_gemm<gemmtune_clusterk_types<TBM, TBN, TBK, WM, WN, STAGES, SWIZZLE, SLICES, TRANS_A, TRANS_B>,
                         SLICES>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, batch);
}
