// gemmtune kernel template: FP32 GEMM on tensor cores at FP32 accuracy (family "tf32x3",
// precision class faithful): CUTLASS 2.x's tensor-op GEMM with OpMultiplyAddFastF32.
//
// cutlass::gemm::device::Gemm<float, LayoutA, float, LayoutB, float, row-major C, float,
// OpClassTensorOp, Sm80, ThreadblockShape TBM×TBN×TBK, WarpShape WM×WN×TBK, instruction 16×8×8,
// LinearCombination, gemmtune_batched_swizzle<SWIZZLE>, STAGES, alignment, alignment, SplitKSerial,
// OpMultiplyAddFastF32>. Each FP32 operand is split into a TF32 "big" part and a TF32 "small" part
// (a = big + small, the small part the rounding error of the big one), and the kernel accumulates
// big·big + big·small + small·big in FP32 on the tensor cores (mma.sync m16n8k8 TF32): three tensor
// products in place of one FP32 FMA, FP32-level accuracy (Ootomo & Yokota 2022), on units with 8×
// the FP32 pipes' dense rate on the A100 and Hopper (mma.sync reaches about half of Hopper's).
// sm_80 and later.
//
// Forms: GUARDED false reads A, B and C 4 floats (16 bytes) at a time — the plan asks for 16-byte
// aligned pointers, leading dimensions that are multiples of 4 and contiguous extents that are
// multiples of 4 (CUTLASS predicates whole vectors); GUARDED true reads one float at a time and runs
// any M, N, K >= 1, any leading dimensions, any 4-byte aligned pointers.
//
// Layouts, batches, K slices and the wrapper around CUTLASS's kernel are those of the SIMT family
// (templates/cutlass_gemm.cuh; the launch contract in templates/cutlass_simt.cu): block = 32 ×
// (TBM/WM) × (TBN/WN) threads; dynamic shared memory = STAGES × (TBM + TBN) × TBK × 4 bytes
// (asserted against CUTLASS's SharedStorage); grid = the identity swizzle's grid; gridDim.z =
// batch.count × K slices; the workspace holds one lock per C tile per batch when K is sliced.
#include "cutlass_gemm.cuh"

template <int TBM_, int TBN_, int TBK_, int WM, int WN, int STAGES, int SWIZZLE, bool GUARDED, bool TRANS_A, bool TRANS_B>
struct gemmtune_cutlass_tf32x3_types {
  static constexpr int TBM = TBM_, TBN = TBN_, TBK = TBK_;
  static constexpr int kAlign = GUARDED ? 1 : 4;  // floats per global access
  using Swizzle = gemmtune_batched_swizzle<SWIZZLE>;
  using Gemm = cutlass::gemm::device::Gemm<
      float, gemmtune_cutlass_layout<TRANS_A>, float, gemmtune_cutlass_layout<TRANS_B>, float, cutlass::layout::RowMajor,
      float, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80, cutlass::gemm::GemmShape<TBM, TBN, TBK>,
      cutlass::gemm::GemmShape<WM, WN, TBK>, cutlass::gemm::GemmShape<16, 8, 8>,
      cutlass::epilogue::thread::LinearCombination<float, kAlign, float, float>, Swizzle, STAGES, kAlign, kAlign,
      /*SplitKSerial=*/true, cutlass::arch::OpMultiplyAddFastF32>;
  static constexpr int kThreads = 32 * (TBM / WM) * (TBN / WN);
  static constexpr int kSmemBytes = STAGES * (TBM + TBN) * TBK * 4;
};

template <int TBM, int TBN, int TBK, int WM, int WN, int STAGES, int SWIZZLE, bool GUARDED, bool TRANS_A, bool TRANS_B>
__global__ void __launch_bounds__(
    gemmtune_cutlass_tf32x3_types<TBM, TBN, TBK, WM, WN, STAGES, SWIZZLE, GUARDED, TRANS_A, TRANS_B>::kThreads)
    sgemm_cutlass_tf32x3(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb, float beta,
                         float* C, int ldc, GemmtuneBatch batch, int* kSliceLocks) {
  static_assert(STAGES >= 3, "STAGES >= 3: two stages select CUTLASS's double-buffered main loop, whose padded shared memory the plan does not describe");
  gemmtune_cutlass_gemm<gemmtune_cutlass_tf32x3_types<TBM, TBN, TBK, WM, WN, STAGES, SWIZZLE, GUARDED, TRANS_A, TRANS_B>>(
      M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, batch, kSliceLocks);
}
