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
// Batches, serial split-K and the wrapper around CUTLASS's kernel: templates/cutlass_gemm.cuh.
#include "cutlass_gemm.cuh"

template <int TBM_, int TBN_, int TBK_, int WM, int WN, int STAGES, int SWIZZLE, bool TRANS_A, bool TRANS_B>
struct gemmtune_cutlass_simt_types {
  static constexpr int TBM = TBM_, TBN = TBN_, TBK = TBK_;
  using Swizzle = gemmtune_batched_swizzle<SWIZZLE>;
  using Gemm = cutlass::gemm::device::Gemm<
      float, gemmtune_cutlass_layout<TRANS_A>, float, gemmtune_cutlass_layout<TRANS_B>, float, cutlass::layout::RowMajor,
      float, cutlass::arch::OpClassSimt, cutlass::arch::Sm80, cutlass::gemm::GemmShape<TBM, TBN, TBK>,
      cutlass::gemm::GemmShape<WM, WN, TBK>, cutlass::gemm::GemmShape<1, 1, 1>,
      cutlass::epilogue::thread::LinearCombination<float, 1, float, float>, Swizzle, STAGES, 1, 1, /*SplitKSerial=*/true>;
  static constexpr int kThreads = 32 * (TBM / WM) * (TBN / WN);
  static constexpr bool kFixesNonFinite = false;  // FP32 FMA keeps Inf and NaN as IEEE says
  static constexpr int kSmemBytes = STAGES * (TBM + TBN) * TBK * 4;
};

template <int TBM, int TBN, int TBK, int WM, int WN, int STAGES, int SWIZZLE, bool GUARDED, bool TRANS_A, bool TRANS_B>
__global__ void __launch_bounds__(gemmtune_cutlass_simt_types<TBM, TBN, TBK, WM, WN, STAGES, SWIZZLE, TRANS_A, TRANS_B>::kThreads)
    sgemm_cutlass_simt(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb, float beta,
                       float* C, int ldc, GemmtuneBatch batch, int* kSliceLocks) {
  static_assert(STAGES >= 3, "STAGES >= 3: two stages select CUTLASS's double-buffered main loop, whose padded shared memory the plan does not describe");
  gemmtune_cutlass_gemm<gemmtune_cutlass_simt_types<TBM, TBN, TBK, WM, WN, STAGES, SWIZZLE, TRANS_A, TRANS_B>>(
      M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, batch, kSliceLocks);
}
