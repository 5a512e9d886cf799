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

// Set when the block's epilogue wrote a NaN (cleared by thread 0 before the main loop).
__shared__ int gemmtune_tf32x3_wrote_nan;

// Inf and NaN: CUTLASS's split of an operand into big and small TF32 parts makes the small part of
// ±Inf Inf - Inf = NaN, and even a split that kept it 0 meets Inf times a partner's small part that
// is exactly 0 (any partner with 11 significant bits or fewer): NaN where FP32 FMA gives ±Inf.
// Neither can be avoided inside the product at its speed (a split that kept Inf's small part 0 ran
// at 50 instead of 74 TFLOP/s at 8192 on an H100; a flag set in the split spilled registers), so
// the block repairs its tile afterwards (gemmtune_tf32x3_repair), and only when it wrote a NaN.
//
// CUTLASS's LinearCombination that notes whether it wrote a NaN: a compare per element of the
// epilogue, nothing in the main loop.
template <int kAlign>
struct gemmtune_tf32x3_output : cutlass::epilogue::thread::LinearCombination<float, kAlign, float, float> {
  using Base = cutlass::epilogue::thread::LinearCombination<float, kAlign, float, float>;
  using Base::Base;
  CUTLASS_HOST_DEVICE typename Base::FragmentOutput operator()(typename Base::FragmentAccumulator const& accumulator,
                                                               typename Base::FragmentSource const& source) const {
    return noted(Base::operator()(accumulator, source));
  }
  CUTLASS_HOST_DEVICE typename Base::FragmentOutput operator()(typename Base::FragmentAccumulator const& accumulator) const {
    return noted(Base::operator()(accumulator));
  }
  CUTLASS_HOST_DEVICE static typename Base::FragmentOutput noted(typename Base::FragmentOutput const& out) {
#if defined(__CUDA_ARCH__)
    bool nan = false;
    for (int i = 0; i < kAlign; ++i) nan = nan || isnan(out[i]);
    if (nan) gemmtune_tf32x3_wrote_nan = 1;
#endif
    return out;
  }
};

// With beta = 0, once C is final, every NaN of the block's tile whose FP32 dot product is ±Inf
// becomes alpha·(that product), the value FP32 FMA gives; a NaN the inputs make (Inf - Inf, a NaN
// operand) has a NaN product and stays. Only the block that wrote the tile's final values (the last
// K slice) looks, and only when it wrote a NaN: an earlier slice's NaN reaches it through C. With
// beta != 0 nothing is repaired: C's old value is gone by then, and a NaN or ∓Inf in it would make
// the right answer NaN — so such a call may give NaN where FP32 FMA gives ±Inf, never the reverse.
template <int TBM, int TBN, int THREADS, class Swizzle, bool TRANS_A, bool TRANS_B>
struct gemmtune_tf32x3_repair {
  template <class Params>
  static __device__ void run(const Params& p, int M, int N, int K, float alpha, const float* A, int lda,
                             const float* B, int ldb, float beta, float* C, int ldc, const GemmtuneBatch& batch) {
    const int slices = gemmtune_cutlass_slices;
    const cutlass::gemm::GemmCoord tile = Swizzle::get_tile_offset(p.swizzle_log_tile);
    if (tile.m() >= p.grid_tiled_shape.m() || tile.n() >= p.grid_tiled_shape.n()) return;  // computed nothing
    if (beta != 0.0f || !gemmtune_tf32x3_wrote_nan || tile.k() != slices - 1) return;
    gemmtune_select_batch(batch, static_cast<int>(blockIdx.z) / slices, A, B, C);
    for (int e = threadIdx.x; e < TBM * TBN; e += THREADS) {
      const int i = tile.m() * TBM + e / TBN, j = tile.n() * TBN + e % TBN;
      if (i >= M || j >= N) continue;
      float* c = C + static_cast<long long>(i) * ldc + j;
      if (!isnan(*c)) continue;
      float dot = 0.0f;
      for (int k = 0; k < K; ++k)
        dot = fmaf(TRANS_A ? A[static_cast<long long>(k) * lda + i] : A[static_cast<long long>(i) * lda + k],
                   TRANS_B ? B[static_cast<long long>(j) * ldb + k] : B[static_cast<long long>(k) * ldb + j], dot);
      if (isinf(dot)) *c = alpha * dot;
    }
  }
};

template <int TBM_, int TBN_, int TBK_, int WM, int WN, int STAGES, int SWIZZLE, bool GUARDED, bool TRANS_A, bool TRANS_B>
struct gemmtune_cutlass_tf32x3_types {
  static constexpr int TBM = TBM_, TBN = TBN_, TBK = TBK_;
  static constexpr int kAlign = GUARDED ? 1 : 4;  // floats per global access
  using Swizzle = gemmtune_batched_swizzle<SWIZZLE>;
  using Gemm = cutlass::gemm::device::Gemm<
      float, gemmtune_cutlass_layout<TRANS_A>, float, gemmtune_cutlass_layout<TRANS_B>, float, cutlass::layout::RowMajor,
      float, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80, cutlass::gemm::GemmShape<TBM, TBN, TBK>,
      cutlass::gemm::GemmShape<WM, WN, TBK>, cutlass::gemm::GemmShape<16, 8, 8>,
      gemmtune_tf32x3_output<kAlign>, Swizzle, STAGES, kAlign, kAlign,
      /*SplitKSerial=*/true, cutlass::arch::OpMultiplyAddFastF32>;
  static constexpr int kThreads = 32 * (TBM / WM) * (TBN / WN);
  static constexpr int kSmemBytes = STAGES * (TBM + TBN) * TBK * 4;
  static constexpr bool kFixesNonFinite = true;
  template <class Params>
  static __device__ void fixNonFinite(const Params& p, int M, int N, int K, float alpha, const float* A, int lda,
                                      const float* B, int ldb, float beta, float* C, int ldc,
                                      const GemmtuneBatch& batch) {
    gemmtune_tf32x3_repair<TBM, TBN, kThreads, Swizzle, TRANS_A, TRANS_B>::run(p, M, N, K, alpha, A, lda, B, ldb,
                                                                               beta, C, ldc, batch);
  }
};

template <int TBM, int TBN, int TBK, int WM, int WN, int STAGES, int SWIZZLE, bool GUARDED, bool TRANS_A, bool TRANS_B>
__global__ void __launch_bounds__(
    gemmtune_cutlass_tf32x3_types<TBM, TBN, TBK, WM, WN, STAGES, SWIZZLE, GUARDED, TRANS_A, TRANS_B>::kThreads)
    sgemm_cutlass_tf32x3(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb, float beta,
                         float* C, int ldc, GemmtuneBatch batch, int* kSliceLocks) {
  static_assert(STAGES >= 3, "STAGES >= 3: two stages select CUTLASS's double-buffered main loop, whose padded shared memory the plan does not describe");
  if (threadIdx.x == 0) gemmtune_tf32x3_wrote_nan = 0;  // read after the wrapper's first barrier
  gemmtune_cutlass_gemm<gemmtune_cutlass_tf32x3_types<TBM, TBN, TBK, WM, WN, STAGES, SWIZZLE, GUARDED, TRANS_A, TRANS_B>>(
      M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, batch, kSliceLocks);
}
