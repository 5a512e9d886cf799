// gemmtune kernel template: FP32 GEMM at FP32 accuracy on FP16 tensor cores (family "fp16x3",
// precision class faithful). FP16 mma.sync runs at twice TF32's rate on Hopper (measured on an
// H100: 645 against 322 TFLOP/s), so three FP16 products cost what 1.5 TF32 products do.
//
// Four kernels, one after another on the caller's stream, all in the workspace past its zeroed
// prefix (gemmtune_fp16x3_layout; nothing here needs or leaves zeros):
// 1. gemmtune_fp16x3_split_a: each row i of op(A) gets a power-of-two scale s_i that puts its
//    largest magnitude in [2^14, 2^15) (FP16's range then holds the row) and is split into FP16
//    parts a·s_i = a0 + a1 (11 + 11 significant bits), written K-contiguous as [a1 | a0 | a0], each
//    part Kp = K rounded up to 64 long (zeros past K). A row holding Inf or NaN is flagged.
// 2. gemmtune_fp16x3_split_b: the same for each column j of op(B) (scale t_j), as [b0 | b1 | b0];
//    columns up to N rounded up to 8 (zeros) so that D's rows are whole 16-byte vectors.
// 3. sgemm_cutlass_fp16x3 (the main kernel): D = A'·B' over K' = 3·Kp = a1·b0 + a0·b1 + a0·b0, a
//    CUTLASS 2.x FP16 tensor-op GEMM (mma.sync m16n8k16, FP32 accumulate) with staged accumulation:
//    every k tile accumulates into freshly cleared registers that are then added, FP32 round to
//    nearest, into the final accumulators. Hopper's FP16 mma.sync accumulates with a bias, its error
//    growing with the K one accumulator sees (measured on an H100: whole-K accumulation gave 1.7–9×
//    cuBLAS SGEMM's error, staged 6–9× less than cuBLAS's). CUTLASS stages its tf32x3 kernels the
//    same way; the specialisation below turns it on for FP16 operands.
// 4. gemmtune_fp16x3_unscale: C = alpha·D/(s_i·t_j) + beta·C (the scales are powers of two: exact),
//    and for a flagged row or column C = alpha·(its FP32 dot product) + beta·C, so Inf and NaN
//    propagate as FP32 FMA's do. beta == 0 never reads C.
// Batches (strided or pointer arrays) in grid z, each with its own region of the workspace; any
// M, N, K >= 1, layouts, leading dimensions.
// An element more than 2^17 below its row's (or column's) largest loses low bits in FP16: the
// faithful checks decide per problem whether the family's error stays within cuBLAS SGEMM's.
#include <cutlass/arch/mma.h>
#include <cutlass/gemm/warp/mma_tensor_op.h>
#include <cuda_fp16.h>

namespace cutlass::arch::detail {
template <typename Shape, typename LayoutA, typename LayoutB, typename LayoutC, typename Policy, int PartitionsK,
          bool RowMajor, typename Enable>
struct UseStagedAccumulation<cutlass::gemm::warp::MmaTensorOp<Shape, cutlass::half_t, LayoutA, cutlass::half_t, LayoutB,
                                                             float, LayoutC, Policy, PartitionsK, RowMajor, Enable>> {
  static bool const value = true;
};
}  // namespace cutlass::arch::detail

#include "cutlass_gemm.cuh"

// Where each part of batch b lives in the workspace (bytes; 256-byte aligned regions, one batch's
// after another, all past the zeroed prefix); generator/families/CutlassFp16x3.cpp sizes the
// workspace with the same formula.
struct gemmtune_fp16x3_layout {
  static constexpr long long kPrefix = 64LL << 20;  // LaunchPlan.hpp's kZeroedWorkspaceBytes
  int M, N, K, Np, Kp;
  long long base;
  __device__ gemmtune_fp16x3_layout(int m, int n, int k, int b)
      : M(m), N(n), K(k), Np((n + 7) / 8 * 8), Kp((k + 63) / 64 * 64), base(kPrefix + b * bytesPerBatch()) {}
  static __device__ long long up(long long bytes) { return (bytes + 255) / 256 * 256; }
  __device__ long long bytesPerBatch() const {
    return 2 * up(4LL * M) + 2 * up(4LL * Np) + up(2LL * M * 3 * Kp) + up(2LL * Np * 3 * Kp) + up(4LL * M * Np);
  }
  __device__ long long scaleA() const { return base; }
  __device__ long long flagA() const { return scaleA() + up(4LL * M); }
  __device__ long long scaleB() const { return flagA() + up(4LL * M); }
  __device__ long long flagB() const { return scaleB() + up(4LL * Np); }
  __device__ long long partsA() const { return flagB() + up(4LL * Np); }
  __device__ long long partsB() const { return partsA() + up(2LL * M * 3 * Kp); }
  __device__ long long product() const { return partsB() + up(2LL * Np * 3 * Kp); }
  template <class T>
  static __device__ T* at(int* workspace, long long offset) {
    return reinterpret_cast<T*>(reinterpret_cast<char*>(workspace) + offset);
  }
};

// Batch blockIdx.z's A, B and C.
__device__ __forceinline__ void gemmtune_fp16x3_batch(const GemmtuneBatch& batch, const float*& A, const float*& B,
                                                     float*& C) {
  gemmtune_select_batch(batch, static_cast<int>(blockIdx.z), A, B, C);
}

// 2^(14 - floor(log2 m)), kept within FP32's normal range (a row of subnormals keeps scale 2^126).
__device__ __forceinline__ float gemmtune_fp16x3_scale(float m) {
  if (!(m > 0.0f) || isinf(m)) return 1.0f;
  int e;
  frexpf(m, &e);  // m = f·2^e, f in [0.5, 1)
  return ldexpf(1.0f, min(15 - e, 126));
}

// The scale of the line whose largest magnitude this block reduced (every thread's `m`), and
// whether it holds Inf or NaN (`bad`): the block's 256 threads reduce over 8 rows of 32 in `red`.
__device__ __forceinline__ void gemmtune_fp16x3_reduce(float& m, int& bad, float (*red)[33], int (*redBad)[33]) {
  red[threadIdx.y][threadIdx.x] = m;
  redBad[threadIdx.y][threadIdx.x] = bad;
  __syncthreads();
  m = 0.0f, bad = 0;
  for (int r = 0; r < 8; ++r) m = fmaxf(m, red[r][threadIdx.x]), bad |= redBad[r][threadIdx.x];
  __syncthreads();
}

// One block (32 × 8 threads) splits 32 lines of length K: line l's element k is at
// x[l·lineStride + k·kStride]. kStride == 1 (contiguous lines): each of the 8 warps reads along
// k; otherwise the 32 threads of a warp read 32 neighbouring lines and a shared tile turns the
// writes K-contiguous. Segment s of line l is out[l·3Kp + s·Kp + k .. ]: x1 (the small part) where
// small_s is 1, else x0.
template <bool CONTIGUOUS>
__device__ void gemmtune_fp16x3_split_lines(const float* x, long long lineStride, long long kStride, int lines,
                                            int linesPadded, int K, int Kp, int small0, int small1, int small2, float* scales,
                                            int* flags, __half* out) {
  __shared__ float red[8][33];
  __shared__ int redBad[8][33];
  __shared__ float tile[32][33];
  const int l0 = blockIdx.x * 32;
  // The scale of line l0 + threadIdx.x: its largest magnitude, and whether it holds Inf or NaN.
  float m = 0.0f;
  int bad = 0;
  const int l = l0 + threadIdx.x;
  if (CONTIGUOUS) {  // warp w reads lines l0 + w, l0 + w + 8, ... along k; lanes split k
    for (int j = threadIdx.y; j < 32; j += 8) {
      float mj = 0.0f;
      int bj = 0;
      if (l0 + j < lines)
        for (int k = threadIdx.x; k < K; k += 32) {
          const float v = x[(l0 + j) * lineStride + static_cast<long long>(k)];
          mj = fmaxf(mj, fabsf(v)), bj |= !isfinite(v);
        }
      for (int o = 16; o; o >>= 1) mj = fmaxf(mj, __shfl_xor_sync(~0u, mj, o)), bj |= __shfl_xor_sync(~0u, bj, o);
      if (threadIdx.x == 0) tile[0][j] = mj, tile[1][j] = __int_as_float(bj);
    }
    __syncthreads();
    if (threadIdx.y == 0) m = tile[0][threadIdx.x], bad = __float_as_int(tile[1][threadIdx.x]);
    __syncthreads();
  } else if (l < lines) {
    for (int k = threadIdx.y; k < K; k += 8) {
      const float v = x[l * lineStride + k * kStride];
      m = fmaxf(m, fabsf(v)), bad |= !isfinite(v);
    }
  }
  gemmtune_fp16x3_reduce(m, bad, red, redBad);
  const float s = gemmtune_fp16x3_scale(m);
  if (threadIdx.y == 0 && l < linesPadded) scales[l] = s, flags[l] = l < lines && bad;
  red[0][threadIdx.x] = s;
  __syncthreads();
  // The parts, through the tile: read 32 lines × 32 k as the memory order allows, write each line's
  // 32 k contiguously.
  for (int k0 = 0; k0 < Kp; k0 += 32) {
    for (int r = threadIdx.y; r < 32; r += 8) {
      // CONTIGUOUS: row r of the tile is line l0 + r, k along threadIdx.x; else k0 + r, lines along x.
      const int line = CONTIGUOUS ? l0 + r : l0 + threadIdx.x, k = CONTIGUOUS ? k0 + threadIdx.x : k0 + r;
      const float v = line < lines && k < K ? x[line * lineStride + k * kStride] : 0.0f;
      if (CONTIGUOUS) tile[r][threadIdx.x] = v; else tile[threadIdx.x][r] = v;
    }
    __syncthreads();
    for (int r = threadIdx.y; r < 32; r += 8) {
      const int line = l0 + r, k = k0 + threadIdx.x;
      if (line >= linesPadded) continue;
      const float v = tile[r][k - k0] * red[0][r];
      const __half h0 = __float2half_rn(v);
      const __half h1 = __float2half_rn(v - __half2float(h0));
      __half* o = out + static_cast<long long>(line) * 3 * Kp + k;
      o[0] = small0 ? h1 : h0, o[Kp] = small1 ? h1 : h0, o[2 * Kp] = small2 ? h1 : h0;
    }
    __syncthreads();
  }
}

// Rows of op(A): stored A's rows (op N) or columns (op T). Parts [a1 | a0 | a0]. Batch: grid z.
template <bool TRANS_A>
__global__ void __launch_bounds__(256) gemmtune_fp16x3_split_a(int M, int N, int K, const float* A, int lda,
                                                               GemmtuneBatch batch, int* workspace) {
  const float* unusedB = nullptr;
  float* unusedC = nullptr;
  gemmtune_fp16x3_batch(batch, A, unusedB, unusedC);
  const gemmtune_fp16x3_layout w(M, N, K, blockIdx.z);
  using L = gemmtune_fp16x3_layout;
  gemmtune_fp16x3_split_lines<!TRANS_A>(A, TRANS_A ? 1 : lda, TRANS_A ? lda : 1, M, M, K, w.Kp, 1, 0, 0,
                                        L::at<float>(workspace, w.scaleA()), L::at<int>(workspace, w.flagA()),
                                        L::at<__half>(workspace, w.partsA()));
}

// Columns of op(B): stored B's columns (op N) or rows (op T), padded to Np with zero lines. Parts
// [b0 | b1 | b0], paired with A's [a1 | a0 | a0]. Batch: grid z.
template <bool TRANS_B>
__global__ void __launch_bounds__(256) gemmtune_fp16x3_split_b(int M, int N, int K, const float* B, int ldb,
                                                               GemmtuneBatch batch, int* workspace) {
  const float* unusedA = nullptr;
  float* unusedC = nullptr;
  gemmtune_fp16x3_batch(batch, unusedA, B, unusedC);
  const gemmtune_fp16x3_layout w(M, N, K, blockIdx.z);
  using L = gemmtune_fp16x3_layout;
  gemmtune_fp16x3_split_lines<TRANS_B>(B, TRANS_B ? ldb : 1, TRANS_B ? 1 : ldb, N, w.Np, K, w.Kp, 0, 1, 0,
                                       L::at<float>(workspace, w.scaleB()), L::at<int>(workspace, w.flagB()),
                                       L::at<__half>(workspace, w.partsB()));
}

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
      STAGES, 8, 8>;
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

// C = alpha·D/(s_i·t_j) + beta·C, one thread per element of C (x along its rows, batch in z); a
// flagged row or column gets alpha·(its FP32 dot product) + beta·C instead.
template <bool TRANS_A, bool TRANS_B>
__global__ void __launch_bounds__(256) gemmtune_fp16x3_unscale(int M, int N, int K, float alpha, const float* A, int lda,
                                                               const float* B, int ldb, float beta, float* C, int ldc,
                                                               GemmtuneBatch batch, int* workspace) {
  using L = gemmtune_fp16x3_layout;
  gemmtune_fp16x3_batch(batch, A, B, C);
  const L w(M, N, K, blockIdx.z);
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= N) return;
  const float* d = L::at<float>(workspace, w.product());
  for (int i = blockIdx.y; i < M; i += gridDim.y) {  // grid y holds at most 65535 rows
  float value;
  if (L::at<int>(workspace, w.flagA())[i] || L::at<int>(workspace, w.flagB())[j]) {
    float dot = 0.0f;
    for (int k = 0; k < K; ++k)
      dot = fmaf(TRANS_A ? A[static_cast<long long>(k) * lda + i] : A[static_cast<long long>(i) * lda + k],
                 TRANS_B ? B[static_cast<long long>(j) * ldb + k] : B[static_cast<long long>(k) * ldb + j], dot);
    value = alpha * dot;
  } else {
    const float unscaled = d[static_cast<long long>(i) * w.Np + j] / L::at<float>(workspace, w.scaleA())[i] /
                           L::at<float>(workspace, w.scaleB())[j];
    value = alpha * unscaled;
  }
  float* c = C + static_cast<long long>(i) * ldc + j;
  *c = beta == 0.0f ? value : fmaf(beta, *c, value);
  }
}
