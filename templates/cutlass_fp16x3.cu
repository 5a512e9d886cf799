// gemmtune kernel template: FP32 GEMM at FP32 accuracy on FP16 tensor cores (family "fp16x3",
// precision class faithful). FP16 mma.sync runs at twice TF32's rate on Hopper (measured on an
// H100: 645 against 322 TFLOP/s), so three FP16 products cost what 1.5 TF32 products do.
//
// Eight kernels, one after another on the caller's stream (templates/fp16x3_passes.cuh): per
// operand maxima, scales and split into FP16 parts; the GEMM; unscale.
// The GEMM, sgemm_cutlass_fp16x3 (the main kernel): D = A'·B' over K' = 3·Kp, a CUTLASS 2.x FP16
// tensor-op GEMM (mma.sync m16n8k16) whose every mma starts from zero and is added, FP32 round to
// nearest, into the accumulators (gemmtune_fp16_restarted below). Hopper's FP16 mma.sync
// accumulates with a bias, its error growing with the K one accumulator sees (measured on an H100:
// whole-K accumulation gave 1.7–9× cuBLAS SGEMM's error).
// Batches in grid z; any M, N, K >= 1, layouts, leading dimensions.
// An element more than 2^17 below its row's (or column's) largest loses low bits in FP16: the
// faithful checks decide per problem whether the family's error stays within cuBLAS SGEMM's.
#include <cutlass/arch/mma.h>
#include <cutlass/arch/mma_sm80.h>
#include <cuda_fp16.h>

// The GEMM's math operator: every FP16 mma starts from a zero accumulator and its 16-product sum is
// added, FP32 round to nearest, into the block's accumulators. Hopper's FP16 mma.sync accumulates
// with a bias (its error grows with the K one accumulator sees); restarting at every mma keeps that
// error below FP32 FMA's. CUTLASS's staged accumulation restarts every k tile instead, at the cost of
// a second set of accumulators: 64×64 warp tiles then spill, and 128×128 block tiles are bound by L2
// (measured on an H100: 86 % of L2 throughput at 8192, 248 TFLOP/s of FP16 work).
struct gemmtune_fp16_restarted {};

namespace cutlass::arch {
template <>
struct Mma<gemm::GemmShape<16, 8, 16>, 32, half_t, layout::RowMajor, half_t, layout::ColumnMajor, float,
           layout::RowMajor, gemmtune_fp16_restarted> {
  using Shape = gemm::GemmShape<16, 8, 16>;
  using ElementA = half_t;
  using LayoutA = layout::RowMajor;
  using FragmentA = Array<half_t, 8>;
  using ElementB = half_t;
  using LayoutB = layout::ColumnMajor;
  using FragmentB = Array<half_t, 4>;
  using ElementC = float;
  using LayoutC = layout::RowMajor;
  using FragmentC = Array<float, 4>;
  using Operator = gemmtune_fp16_restarted;
  using ArchTag = arch::Sm80;

  CUTLASS_DEVICE void operator()(FragmentC& d, FragmentA const& a, FragmentB const& b, FragmentC const& c) const {
    uint32_t const* A = reinterpret_cast<uint32_t const*>(&a);
    uint32_t const* B = reinterpret_cast<uint32_t const*>(&b);
    float t[4];
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%10,%10,%10,%10};\n"
        : "=f"(t[0]), "=f"(t[1]), "=f"(t[2]), "=f"(t[3])
        : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B[0]), "r"(B[1]), "f"(0.0f));
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < 4; ++i) d[i] = c[i] + t[i];
  }
};
}  // namespace cutlass::arch

#include "cutlass_gemm.cuh"
#include "fp16x3_passes.cuh"

// The CUTLASS FP16 GEMM D = A'·B' (M × Np × 3Kp, A' row-major, B' column-major, both K-contiguous;
// D row-major with ld Np), its Params built on the GPU as templates/cutlass_gemm.cuh does.
template <int TBM, int TBN, int TBK, int WM, int WN, int STAGES, int SWIZZLE>
struct gemmtune_fp16x3_types {
  using Swizzle = gemmtune_batched_swizzle<SWIZZLE>;
  using Gemm = cutlass::gemm::device::Gemm<
      cutlass::half_t, cutlass::layout::RowMajor, cutlass::half_t, cutlass::layout::ColumnMajor, float,
      cutlass::layout::RowMajor, float, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
      cutlass::gemm::GemmShape<TBM, TBN, TBK>, cutlass::gemm::GemmShape<WM, WN, TBK>,
      cutlass::gemm::GemmShape<16, 8, 16>, cutlass::epilogue::thread::LinearCombination<float, 4, float, float>, Swizzle,
      STAGES, 8, 8, false, gemmtune_fp16_restarted>;
  static constexpr int kThreads = 32 * (TBM / WM) * (TBN / WN);
  static constexpr int kSmemBytes = STAGES * (TBM + TBN) * TBK * 2;
};

template <int TBM, int TBN, int TBK, int WM, int WN, int STAGES, int SWIZZLE, bool GUARDED, bool TRANS_A, bool TRANS_B>
__global__ void __launch_bounds__(gemmtune_fp16x3_types<TBM, TBN, TBK, WM, WN, STAGES, SWIZZLE>::kThreads)
    sgemm_cutlass_fp16x3(int M, int N, int K, int* workspace) {
  using Types = gemmtune_fp16x3_types<TBM, TBN, TBK, WM, WN, STAGES, SWIZZLE>;
  using Kernel = typename Types::Gemm::GemmKernel;
  using Params = typename Kernel::Params;
  using L = gemmtune_fp16x3_layout;
  static_assert(Kernel::kThreadCount == Types::kThreads, "threads per block differ from the plan's");
  static_assert(sizeof(typename Kernel::SharedStorage) <= Types::kSmemBytes,
                "CUTLASS's shared storage exceeds the plan's dynamic shared memory");
  static_assert(STAGES >= 3, "STAGES >= 3: the multistage main loop, whose shared memory the plan describes");
  __shared__ alignas(alignof(Params)) unsigned char paramBytes[sizeof(Params)];
  extern __shared__ int4 gemmtune_cutlass_smem[];
  if (threadIdx.x == 0) {
    const L w(M, N, K, blockIdx.z);  // batch: grid z (the swizzle's K slice is then 0)
    gemmtune_cutlass_slices = 1;
    cutlass::gemm::GemmCoord problem(M, w.Np, 3 * w.Kp);
    cutlass::gemm::GemmCoord tiled = Types::Swizzle::get_tiled_shape(problem, {TBM, TBN, TBK}, 1);
    auto* a = L::at<cutlass::half_t>(workspace, w.partsA());
    auto* b = L::at<cutlass::half_t>(workspace, w.partsB());
    float* d = L::at<float>(workspace, w.product());
    Params params(problem, tiled, {a, 3 * w.Kp}, {b, 3 * w.Kp}, {d, w.Np}, {d, w.Np}, {1.0f, 0.0f}, nullptr);
    const dim3 grid = Types::Swizzle::get_grid_shape(tiled);
    // A grid the swizzle did not plan for would leave tiles uncomputed: compute none instead.
    if (grid.x != gridDim.x || grid.y != gridDim.y) params.grid_tiled_shape = {0, 0, 0};
    memcpy(paramBytes, &params, sizeof(Params));
  }
  __syncthreads();
  Kernel op;
  op(*reinterpret_cast<const Params*>(paramBytes),
     *reinterpret_cast<typename Kernel::SharedStorage*>(gemmtune_cutlass_smem));
}
