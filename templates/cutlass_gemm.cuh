// gemmtune's launch of a CUTLASS 2.x device::Gemm kernel, shared by the CUTLASS families
// (templates/cutlass_simt.cu, templates/cutlass_tf32x3.cu; templates/cutlass_clusterk.cu builds its
// Params here and runs only the main loop): batches and K slices in grid z, the kernel's Params
// built on the GPU.
//
// Batches: block z computes batch b = z / slices on A, B, C moved by gemmtune_select_batch
// (strides or pointer arrays) with the locks kSliceLocks + b·tiles_m·tiles_n, and reports slice
// z % slices to CUTLASS's kernel through the swizzle (gemmtune_batched_swizzle): the kernel is
// device::Gemm's own, serial split-K intact, and never sees the batch.
//
// Serial split-K (CUTLASS's SplitKSerial, compiled in for cutlass and tf32x3: one program serves
// every slice count, and with one slice the locks are never touched; clusterk sums its slices in
// the cluster instead): slice s of a tile computes its share of
// K, waits until the tile's lock reads s, adds alpha·(its product) into C (slice 0 also applies
// beta to C, later ones add onto what the earlier slices wrote), and passes the lock on; the last
// slice sets it back to zero. The order is fixed, so results are bit-identical run to run. Slices
// beyond K compute nothing and add zero.
//
// Why a wrapper instead of cutlass::Kernel<GemmKernel>: GemmKernel::Params (iterator strides,
// fast-divmod constants, the swizzle's log tile) must match the instantiated type exactly. It is
// built here, on the GPU, by CUTLASS's own host-device constructor — once per block, by thread 0,
// into shared memory — so no host code can drift from the headers. A launch whose grid differs
// from what the swizzle and the batch count expect computes nothing (verification then fails
// loudly).
// beta == 0 never reads C (LinearCombination skips the source when beta is zero).
#pragma once
#include <cutlass/gemm/device/gemm.h>
#include "batch.cuh"

// K slices per batch (gridDim.z / batch.count), set by thread 0 before the block reads its tile.
__shared__ int gemmtune_cutlass_slices;

// CUTLASS's identity swizzle with batches in grid z: the tile is the base swizzle's, the K slice
// is blockIdx.z % slices (the batch, blockIdx.z / slices, is applied to the pointers instead).
// kernel::Gemm asks for its tile only through this overload; defining it hides the others, so a
// kernel that used them would not compile rather than read a batch as a slice.
template <int SWIZZLE>
struct gemmtune_batched_swizzle : cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<SWIZZLE> {
  using Base = cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<SWIZZLE>;
  CUTLASS_DEVICE static cutlass::gemm::GemmCoord get_tile_offset(int log_tile) {
    const cutlass::gemm::GemmCoord tile = Base::get_tile_offset(log_tile);
    return {tile.m(), tile.n(), static_cast<int>(blockIdx.z) % gemmtune_cutlass_slices};
  }
};

// Row-major A or B as the layout says (op T: CUTLASS's ColumnMajor with the same ld).
template <bool TRANS>
using gemmtune_cutlass_layout = typename cutlass::platform::conditional<TRANS, cutlass::layout::ColumnMajor,
                                                                        cutlass::layout::RowMajor>::type;

// The kernel's Params for this block, built on the GPU by thread 0 into shared memory (see the
// top of this file) and returned to every thread after a barrier. `Types` names Gemm (a
// device::Gemm whose swizzle is gemmtune_batched_swizzle), Swizzle, TBM, TBN, TBK.
template <class Types>
__device__ __forceinline__ const typename Types::Gemm::GemmKernel::Params& gemmtune_cutlass_params(
    int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb, float beta, float* C, int ldc,
    GemmtuneBatch batch, int* kSliceLocks) {
  using Params = typename Types::Gemm::GemmKernel::Params;
  __shared__ alignas(alignof(Params)) unsigned char paramBytes[sizeof(Params)];
  if (threadIdx.x == 0) {
    // Grid z holds whole batches of slices; any other depth (or no batch) is a launch the plan did
    // not make. Its blocks still need a nonzero slice count and an existing batch (0) to build
    // Params from, and then compute nothing.
    const bool wholeBatches = batch.count >= 1 && gridDim.z % batch.count == 0;
    const int slices = wholeBatches ? gridDim.z / batch.count : 1;
    const int b = wholeBatches ? static_cast<int>(blockIdx.z) / slices : 0;
    gemmtune_cutlass_slices = slices;
    const float* a = A;
    const float* bOp = B;
    float* c = C;
    if (wholeBatches) gemmtune_select_batch(batch, b, a, bOp, c);
    cutlass::gemm::GemmCoord problem(M, N, K);
    cutlass::gemm::GemmCoord tiled = Types::Swizzle::get_tiled_shape(problem, {Types::TBM, Types::TBN, Types::TBK}, slices);
    // One lock per C tile of each batch: the batches' slices run at the same time.
    int* locks = kSliceLocks ? kSliceLocks + static_cast<long long>(b) * tiled.m() * tiled.n() : nullptr;
    Params params(problem, tiled, {const_cast<float*>(a), lda}, {const_cast<float*>(bOp), ldb}, {c, ldc}, {c, ldc},
                  {alpha, beta}, locks);
    const dim3 grid = Types::Swizzle::get_grid_shape(tiled);
    // A grid the swizzle did not plan for would leave tiles uncomputed: compute none instead.
    if (!wholeBatches || grid.x != gridDim.x || grid.y != gridDim.y) params.grid_tiled_shape = {0, 0, 0};
    if (slices > 1 && kSliceLocks == nullptr && Types::Gemm::kSplitKSerial)
      params.grid_tiled_shape = {0, 0, 0};  // serial split-K without locks: no safe order
    memcpy(paramBytes, &params, sizeof(Params));
  }
  __syncthreads();
  return *reinterpret_cast<const Params*>(paramBytes);
}

// The body of a family's kernel: `Types` names Gemm, Swizzle, TBM, TBN, TBK, kThreads, kSmemBytes
// and kFixesNonFinite (when true, Types::fixNonFinite(params, M, N, K, alpha, A, lda, B, ldb, beta,
// C, ldc, batch) runs after the kernel, on the caller's A, B and C before any batch is applied).
template <class Types>
__device__ __forceinline__ void gemmtune_cutlass_gemm(int M, int N, int K, float alpha, const float* A, int lda,
                                                      const float* B, int ldb, float beta, float* C, int ldc,
                                                      GemmtuneBatch batch, int* kSliceLocks) {
  using Kernel = typename Types::Gemm::GemmKernel;
  static_assert(Kernel::kThreadCount == Types::kThreads, "threads per block differ from the plan's");
  static_assert(sizeof(typename Kernel::SharedStorage) <= Types::kSmemBytes,
                "CUTLASS's shared storage exceeds the plan's dynamic shared memory");
  extern __shared__ int4 gemmtune_cutlass_smem[];
  const auto& params =
      gemmtune_cutlass_params<Types>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, batch, kSliceLocks);
  Kernel op;
  op(params, *reinterpret_cast<typename Kernel::SharedStorage*>(gemmtune_cutlass_smem));
  // A family whose arithmetic can turn an Inf into NaN repairs its tile once C is final.
  if constexpr (Types::kFixesNonFinite) {
    __syncthreads();
    Types::fixNonFinite(params, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, batch);
  }
}
