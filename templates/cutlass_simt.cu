// gemmtune kernel template: CUTLASS's SIMT SGEMM instantiated at run time (family "cutlass_simt").
//
// cutlass::gemm::device::Gemm<float, LayoutA, float, LayoutB, float, row-major C, OpClassSimt,
// Sm80, ThreadblockShape TBM×TBN×TBK, WarpShape WM×WN×TBK, instruction 1×1×1, LinearCombination,
// the identity swizzle of SWIZZLE (batched, below), STAGES> — the design cuBLAS runs for FP32 on
// sm_80 and later: 8×8 results per thread, A transposed in shared memory, a STAGES-deep cp.async
// pipeline from global to shared memory. CUTLASS predicates every load and store, so one form
// serves any M, N, K >= 1, any leading dimensions and any 4-byte aligned pointers (operand
// alignment 1; GUARDED is accepted for the common naming and changes nothing).
//
// Layouts (row-major convention, problem/GemmShape.hpp): element (i, k) of op(A) is A[i·lda + k]
// for op N (CUTLASS's RowMajor) and A[k·lda + i] for op T (ColumnMajor, same ld); likewise B. The
// shared-memory layouts and the warp's fragment loads are the same in all four (CUTLASS's SIMT
// multistage cores keep A column-major and B row-major in shared memory); only the global→shared
// copy changes, 4 bytes per cp.async in every layout (wider accesses fail CUTLASS's thread maps).
//
// Launch contract (generator/families/CutlassSimt.cpp makes the plan): the gemmtune argument list
// (M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, batch) and the workspace: one int lock per C tile
// per batch, all zero, when there are K slices (null otherwise); block = 32 × (TBM/WM) × (TBN/WN)
// threads; dynamic shared memory = STAGES × (TBM + TBN) × TBK × 4 bytes (asserted below against
// CUTLASS's own SharedStorage); grid = the identity swizzle's grid for the tiled shape
// (ceil(M/TBM), ceil(N/TBN)): (tiles_m << L, ceil(tiles_n / 2^L)) with L = log2 of the largest of
// SWIZZLE, 4, 2 whose threshold tiles_n >= 6, 3, 2 holds (1 otherwise); gridDim.z = batch.count ×
// K slices, layer z being slice z % slices of batch z / slices.
//
// Batches: block z computes batch b = z / slices on A, B, C moved by gemmtune_select_batch
// (strides or pointer arrays) with the locks kSliceLocks + b·tiles_m·tiles_n, and reports slice
// z % slices to CUTLASS's kernel through the swizzle (gemmtune_batched_swizzle): the kernel is
// device::Gemm's own, serial split-K intact, and never sees the batch.
//
// Serial split-K (CUTLASS's SplitKSerial, compiled in always: one program serves every slice
// count, and with one slice the locks are never touched): slice s of a tile computes its share of
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

template <int TBM, int TBN, int TBK, int WM, int WN, int STAGES, int SWIZZLE, bool TRANS_A, bool TRANS_B>
struct gemmtune_cutlass_simt_types {
  using Row = cutlass::layout::RowMajor;
  using Col = cutlass::layout::ColumnMajor;
  using LayoutA = typename cutlass::platform::conditional<TRANS_A, Col, Row>::type;
  using LayoutB = typename cutlass::platform::conditional<TRANS_B, Col, Row>::type;
  using Swizzle = gemmtune_batched_swizzle<SWIZZLE>;
  using Gemm = cutlass::gemm::device::Gemm<
      float, LayoutA, float, LayoutB, float, Row, float, cutlass::arch::OpClassSimt, cutlass::arch::Sm80,
      cutlass::gemm::GemmShape<TBM, TBN, TBK>, cutlass::gemm::GemmShape<WM, WN, TBK>, cutlass::gemm::GemmShape<1, 1, 1>,
      cutlass::epilogue::thread::LinearCombination<float, 1, float, float>, Swizzle, STAGES, 1, 1, /*SplitKSerial=*/true>;
  using Kernel = typename Gemm::GemmKernel;
  static constexpr int kThreads = 32 * (TBM / WM) * (TBN / WN);
  static constexpr int kSmemBytes = STAGES * (TBM + TBN) * TBK * 4;
};

template <int TBM, int TBN, int TBK, int WM, int WN, int STAGES, int SWIZZLE, bool GUARDED, bool TRANS_A, bool TRANS_B>
__global__ void __launch_bounds__(gemmtune_cutlass_simt_types<TBM, TBN, TBK, WM, WN, STAGES, SWIZZLE, TRANS_A, TRANS_B>::kThreads)
    sgemm_cutlass_simt(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb, float beta,
                       float* C, int ldc, GemmtuneBatch batch, int* kSliceLocks) {
  using Types = gemmtune_cutlass_simt_types<TBM, TBN, TBK, WM, WN, STAGES, SWIZZLE, TRANS_A, TRANS_B>;
  using Kernel = typename Types::Kernel;
  using Params = typename Kernel::Params;
  static_assert(STAGES >= 3, "STAGES >= 3: two stages select CUTLASS's double-buffered main loop, whose padded shared memory the plan does not describe");
  static_assert(Kernel::kThreadCount == Types::kThreads, "threads per block differ from 32 x (TBM/WM) x (TBN/WN)");
  static_assert(sizeof(typename Kernel::SharedStorage) <= Types::kSmemBytes,
                "CUTLASS's shared storage exceeds STAGES x (TBM + TBN) x TBK x 4 bytes: the plan's dynamic shared memory is too small");

  __shared__ alignas(alignof(Params)) unsigned char paramBytes[sizeof(Params)];
  extern __shared__ int4 gemmtune_cutlass_smem[];
  if (threadIdx.x == 0) {
    // Grid z holds whole batches of slices; any other depth (or no batch) is a launch the plan did
    // not make. Its blocks still need a nonzero slice count and an existing batch (0) to build
    // Params from, and then compute nothing.
    const bool wholeBatches = batch.count >= 1 && gridDim.z % batch.count == 0;
    const int slices = wholeBatches ? gridDim.z / batch.count : 1;
    const int b = wholeBatches ? static_cast<int>(blockIdx.z) / slices : 0;
    gemmtune_cutlass_slices = slices;
    if (wholeBatches) gemmtune_select_batch(batch, b, A, B, C);
    cutlass::gemm::GemmCoord problem(M, N, K);
    cutlass::gemm::GemmCoord tiled = Types::Swizzle::get_tiled_shape(problem, {TBM, TBN, TBK}, slices);
    // One lock per C tile of each batch: the batches' slices run at the same time.
    int* locks = kSliceLocks ? kSliceLocks + static_cast<long long>(b) * tiled.m() * tiled.n() : nullptr;
    Params params(problem, tiled, {const_cast<float*>(A), lda}, {const_cast<float*>(B), ldb}, {C, ldc}, {C, ldc},
                  {alpha, beta}, locks);
    const dim3 grid = Types::Swizzle::get_grid_shape(tiled);
    // A grid the swizzle did not plan for would leave tiles uncomputed: compute none instead.
    if (!wholeBatches || grid.x != gridDim.x || grid.y != gridDim.y) params.grid_tiled_shape = {0, 0, 0};
    if (slices > 1 && kSliceLocks == nullptr) params.grid_tiled_shape = {0, 0, 0};  // no locks: no safe order
    memcpy(paramBytes, &params, sizeof(Params));
  }
  __syncthreads();
  Kernel op;
  op(*reinterpret_cast<const Params*>(paramBytes),
     *reinterpret_cast<typename Kernel::SharedStorage*>(gemmtune_cutlass_smem));
}
