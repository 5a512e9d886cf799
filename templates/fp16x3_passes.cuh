// gemmtune kernel header: the passes of the fp16x3 families around their FP16 GEMM
// (templates/cutlass_fp16x3.cu: mma.sync through CUTLASS; templates/wgmma_fp16x3.cu: Hopper's
// wgmma), all in the workspace past its zeroed prefix (gemmtune_fp16x3_layout; nothing here
// needs or leaves zeros):
// 1.–2. gemmtune_fp16x3_maxima and _scales, for op(A) and for op(B): each row i of op(A) gets a
//    power-of-two scale s_i that puts its largest magnitude in [2^14, 2^15) (FP16's range then
//    holds the row), each column j of op(B) likewise t_j; a line holding Inf or NaN is flagged.
//    The maxima pass splits K into up to 64 chunks of at least 512 so that many blocks read at once.
//    gemmtune_fp16x3_split then writes each line, K-contiguous, as FP16 parts x·s = x0 + x1
//    (11 + 11 significant bits): rows of A as [a1 | a0 | a0], columns of B (up to N rounded up to 8,
//    zeros past N, so that D's rows are whole 16-byte vectors) as [b0 | b1 | b0], each part Kp = K
//    rounded up to 64 long (zeros past K).
// 3. The family's GEMM: D = A'·B' over K' = 3·Kp = a1·b0 + a0·b1 + a0·b0, FP32, M × Np, ld Np.
// 4. gemmtune_fp16x3_unscale: C = alpha·D/(s_i·t_j) + beta·C (the scales are powers of two: exact),
//    and for a flagged row or column C = alpha·(its FP32 dot product) + beta·C, so Inf and NaN
//    propagate as FP32 FMA's do. beta == 0 never reads C.
// Batches (strided or pointer arrays) in grid z, each with its own region of the workspace.
#pragma once
#include "batch.cuh"

// FP16 bits, converted in PTX: no cuda_fp16.h, which NVRTC finds only with the toolkit's headers.
typedef unsigned short gemmtune_half;

__device__ __forceinline__ gemmtune_half gemmtune_half_rn(float x) {
  gemmtune_half h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
  return h;
}

__device__ __forceinline__ float gemmtune_half_float(gemmtune_half h) {
  float x;
  asm("cvt.f32.f16 %0, %1;" : "=f"(x) : "h"(h));
  return x;
}

// Where each part of batch b lives in the workspace (bytes; 256-byte aligned regions, one batch's
// after another, all past the zeroed prefix); generator/Fp16x3Plan.cpp (fp16x3ScratchPerBatch) sizes the
// workspace with the same formula.
struct gemmtune_fp16x3_layout {
  static constexpr long long kPrefix = 64LL << 20;  // LaunchPlan.hpp's kZeroedWorkspaceBytes
  static constexpr int kChunkK = 512;  // least k per block of the maxima pass (at most kMaxChunks chunks)
  static constexpr int kMaxChunks = 64;
  int M, N, K, Np, Kp, chunks, chunkK;
  long long base;
  __device__ gemmtune_fp16x3_layout(int m, int n, int k, int b)
      : M(m), N(n), K(k), Np((n + 7) / 8 * 8), Kp((k + 63) / 64 * 64),
        chunks(min(kMaxChunks, (k + kChunkK - 1) / kChunkK)), chunkK((k + chunks - 1) / chunks),
        base(kPrefix + b * bytesPerBatch()) {}
  static __device__ long long up(long long bytes) { return (bytes + 255) / 256 * 256; }
  __device__ long long bytesPerBatch() const {
    return 2 * up(4LL * M) + 2 * up(4LL * Np) + up(2LL * M * 3 * Kp) + up(2LL * Np * 3 * Kp) + up(4LL * M * Np) +
           up(8LL * chunks * M) + up(8LL * chunks * Np);
  }
  __device__ long long scaleA() const { return base; }
  __device__ long long flagA() const { return scaleA() + up(4LL * M); }
  __device__ long long scaleB() const { return flagA() + up(4LL * M); }
  __device__ long long flagB() const { return scaleB() + up(4LL * Np); }
  __device__ long long partsA() const { return flagB() + up(4LL * Np); }
  __device__ long long partsB() const { return partsA() + up(2LL * M * 3 * Kp); }
  __device__ long long product() const { return partsB() + up(2LL * Np * 3 * Kp); }
  // Per chunk of k and line: the largest magnitude (float) and whether a value was not finite (int).
  __device__ long long partialA() const { return product() + up(4LL * M * Np); }
  __device__ long long partialB() const { return partialA() + up(8LL * chunks * M); }
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

// 2^(14 - floor(log2 m)), kept within FP32's normal range (a row of subnormals keeps scale 2^127).
__device__ __forceinline__ float gemmtune_fp16x3_scale(float m) {
  if (!(m > 0.0f) || isinf(m)) return 1.0f;
  int e;
  frexpf(m, &e);  // m = f·2^e, f in [0.5, 1)
  return ldexpf(1.0f, min(15 - e, 127));
}

// An operand's lines: rows of op(A) (IS_A) or columns of op(B), of length K. Line l's element k
// is at x[l·lineStride + k·kStride]; contiguous lines are rows of a row-major A or of a transposed B.
template <bool IS_A, bool TRANS>
struct gemmtune_fp16x3_lines {
  static constexpr bool kContiguous = IS_A ? !TRANS : TRANS;
  const float* x;
  long long lineStride, kStride;
  int lines, padded;  // lines, and lines written (B: padded to Np with zero lines)
  float *scales, *partialMax;
  int *flags, *partialBad;
  gemmtune_half* parts;
  int small[3];  // segment s holds the small part where small[s] (A: a1 a0 a0; B: b0 b1 b0)
  __device__ gemmtune_fp16x3_lines(const gemmtune_fp16x3_layout& w, int ld, const GemmtuneBatch& batch, const float* X,
                                   int* workspace) {
    using L = gemmtune_fp16x3_layout;
    // X goes in as both operands; the batch moves it as A's or as B's (one place selects batches).
    const float* asA = X;
    const float* asB = X;
    float* noC = nullptr;
    gemmtune_select_batch(batch, static_cast<int>(blockIdx.z), asA, asB, noC);
    x = IS_A ? asA : asB;
    lineStride = kContiguous ? ld : 1, kStride = kContiguous ? 1 : ld;
    lines = IS_A ? w.M : w.N, padded = IS_A ? w.M : w.Np;
    scales = L::at<float>(workspace, IS_A ? w.scaleA() : w.scaleB());
    flags = L::at<int>(workspace, IS_A ? w.flagA() : w.flagB());
    partialMax = L::at<float>(workspace, IS_A ? w.partialA() : w.partialB());
    partialBad = reinterpret_cast<int*>(partialMax + static_cast<long long>(w.chunks) * padded);
    parts = L::at<gemmtune_half>(workspace, IS_A ? w.partsA() : w.partsB());
    small[0] = IS_A, small[1] = !IS_A, small[2] = 0;
  }
};

// Pass 1, grid (lines / 32, k chunks, batch), 32 × 8 threads: the largest magnitude of 32 lines
// over one chunk of k, and whether the chunk holds Inf or NaN.
template <bool IS_A, bool TRANS>
__global__ void __launch_bounds__(256) gemmtune_fp16x3_maxima(int M, int N, int K, const float* X, int ld,
                                                              GemmtuneBatch batch, int* workspace) {
  const gemmtune_fp16x3_layout w(M, N, K, blockIdx.z);
  const gemmtune_fp16x3_lines<IS_A, TRANS> v(w, ld, batch, X, workspace);
  __shared__ float red[8][33];
  __shared__ int redBad[8][33];
  const int l0 = blockIdx.x * 32, kBegin = blockIdx.y * w.chunkK, kEnd = min(K, kBegin + w.chunkK);
  float m = 0.0f;
  int bad = 0;
  if (v.kContiguous) {  // warp y reads lines l0 + y, l0 + y + 8, ... along k, its lanes 32 k apart
    for (int r = threadIdx.y; r < 32; r += 8) {
      float mr = 0.0f;
      int br = 0;
      if (l0 + r < v.lines)
        for (int k = kBegin + threadIdx.x; k < kEnd; k += 32) {
          const float e = v.x[(l0 + r) * v.lineStride + k];
          mr = fmaxf(mr, fabsf(e)), br |= !isfinite(e);
        }
      for (int o = 16; o; o >>= 1) mr = fmaxf(mr, __shfl_xor_sync(~0u, mr, o)), br |= __shfl_xor_sync(~0u, br, o);
      if (threadIdx.x == r % 32) m = mr, bad = br;  // lane r keeps line l0 + r (rows y ≡ r mod 8 meet below)
    }
  } else if (l0 + static_cast<int>(threadIdx.x) < v.lines) {  // lanes read 32 neighbouring lines
    for (int k = kBegin + threadIdx.y; k < kEnd; k += 8) {
      const float e = v.x[(l0 + threadIdx.x) * v.lineStride + k * v.kStride];
      m = fmaxf(m, fabsf(e)), bad |= !isfinite(e);
    }
  }
  red[threadIdx.y][threadIdx.x] = m, redBad[threadIdx.y][threadIdx.x] = bad;
  __syncthreads();
  if (threadIdx.y == 0 && l0 + static_cast<int>(threadIdx.x) < v.padded) {
    for (int r = 1; r < 8; ++r) m = fmaxf(m, red[r][threadIdx.x]), bad |= redBad[r][threadIdx.x];
    const long long at = static_cast<long long>(blockIdx.y) * v.padded + l0 + threadIdx.x;
    v.partialMax[at] = m, v.partialBad[at] = bad;
  }
}

// Pass 2, grid (lines / 256, 1, batch): each line's scale from its chunks' maxima, and its flag.
template <bool IS_A, bool TRANS>
__global__ void __launch_bounds__(256) gemmtune_fp16x3_scales(int M, int N, int K, const float* X, int ld,
                                                              GemmtuneBatch batch, int* workspace) {
  const gemmtune_fp16x3_layout w(M, N, K, blockIdx.z);
  const gemmtune_fp16x3_lines<IS_A, TRANS> v(w, ld, batch, X, workspace);
  const int l = blockIdx.x * 256 + threadIdx.x;
  if (l >= v.padded) return;
  float m = 0.0f;
  int bad = 0;
  for (int c = 0; c < w.chunks; ++c)
    m = fmaxf(m, v.partialMax[static_cast<long long>(c) * v.padded + l]), bad |= v.partialBad[static_cast<long long>(c) * v.padded + l];
  v.scales[l] = gemmtune_fp16x3_scale(m), v.flags[l] = l < v.lines && bad;
}

// Pass 3, grid (lines / 32, Kp / 64, batch), 32 × 8 threads: one tile of 32 lines × 64 k, read in
// memory order through shared memory, scaled, split and written K-contiguous, two k per thread (one
// 4-byte store per segment): line l's segment s at parts[l·3Kp + s·Kp + k]. Past K and past the
// operand's lines: zeros.
template <bool IS_A, bool TRANS>
__global__ void __launch_bounds__(256) gemmtune_fp16x3_split(int M, int N, int K, const float* X, int ld,
                                                             GemmtuneBatch batch, int* workspace) {
  const gemmtune_fp16x3_layout w(M, N, K, blockIdx.z);
  const gemmtune_fp16x3_lines<IS_A, TRANS> v(w, ld, batch, X, workspace);
  __shared__ float tile[32][65];
  const int l0 = blockIdx.x * 32, k0 = blockIdx.y * 64;
  if (v.kContiguous) {  // warp y reads lines l0 + y, l0 + y + 8, ...: 64 k along the lanes, twice
    for (int r = threadIdx.y; r < 32; r += 8)
      for (int h = 0; h < 64; h += 32) {
        const int line = l0 + r, k = k0 + h + threadIdx.x;
        tile[r][h + threadIdx.x] = line < v.lines && k < K ? v.x[static_cast<long long>(line) * v.lineStride + k] : 0.0f;
      }
  } else {  // lanes read 32 neighbouring lines at one k
    for (int kk = threadIdx.y; kk < 64; kk += 8) {
      const int line = l0 + threadIdx.x, k = k0 + kk;
      tile[threadIdx.x][kk] = line < v.lines && k < K ? v.x[line + static_cast<long long>(k) * v.kStride] : 0.0f;
    }
  }
  __syncthreads();
  for (int r = threadIdx.y; r < 32; r += 8) {
    const int line = l0 + r, k = k0 + 2 * threadIdx.x;
    if (line >= v.padded) continue;
    const float s = v.scales[line];
    const float e0 = tile[r][2 * threadIdx.x] * s, e1 = tile[r][2 * threadIdx.x + 1] * s;
    // Two k per 4-byte store, k in the low half (little-endian, as the GEMM reads FP16 pairs).
    const gemmtune_half big0 = gemmtune_half_rn(e0), big1 = gemmtune_half_rn(e1);
    const gemmtune_half small0 = gemmtune_half_rn(e0 - gemmtune_half_float(big0));
    const gemmtune_half small1 = gemmtune_half_rn(e1 - gemmtune_half_float(big1));
    const unsigned big = big0 | static_cast<unsigned>(big1) << 16, small = small0 | static_cast<unsigned>(small1) << 16;
    unsigned* o = reinterpret_cast<unsigned*>(v.parts + static_cast<long long>(line) * 3 * w.Kp + k);
    const int segment = w.Kp / 2;  // in pairs
    o[0] = v.small[0] ? small : big, o[segment] = v.small[1] ? small : big, o[2 * segment] = v.small[2] ? small : big;
  }
}

// What a column needs, read once per thread: its flag and the exponent of its scale.
struct gemmtune_fp16x3_column {
  int exponent;
  bool flagged;
};

// Column j0 + t of row i, flagged or not: C = alpha·D/(s_i·t_j) + beta·C, or for a flagged row or
// column alpha·(its FP32 dot product) + beta·C, so that Inf and NaN propagate as FP32 FMA's do.
template <bool TRANS_A, bool TRANS_B>
__device__ __forceinline__ float gemmtune_fp16x3_value(float d, int rowExponent, bool rowFlag, gemmtune_fp16x3_column col,
                                                       int i, int j, int K, float alpha, const float* A, int lda,
                                                       const float* B, int ldb) {
  if (rowFlag || col.flagged) {
    float dot = 0.0f;
    for (int k = 0; k < K; ++k)
      dot = fmaf(TRANS_A ? A[static_cast<long long>(k) * lda + i] : A[static_cast<long long>(i) * lda + k],
                 TRANS_B ? B[static_cast<long long>(j) * ldb + k] : B[static_cast<long long>(k) * ldb + j], dot);
    return alpha * dot;
  }
  // One rounding: D times the exact power of two 2^-(e_i + e_j) in double (dividing by one scale
  // after the other in float could overflow, or fall into subnormals before the second brings it
  // back); |e_i + e_j| <= 254 is within double's exponents.
  const double inverse = __longlong_as_double(static_cast<long long>(1023 - rowExponent - col.exponent) << 52);
  return alpha * static_cast<float>(static_cast<double>(d) * inverse);
}

__device__ __forceinline__ int gemmtune_fp16x3_exponent(float powerOfTwo) {
  return ((__float_as_int(powerOfTwo) >> 23) & 0xff) - 127;
}

// Unscale, grid (N / 1024, rows / 8 capped at grid y's limit, batch), 256 threads: each thread four
// columns 256 apart (every warp reads D and writes C in whole 128-byte lines) of every gridDim.y-th
// row. beta == 0 never reads C.
template <bool TRANS_A, bool TRANS_B>
__global__ void __launch_bounds__(256) gemmtune_fp16x3_unscale(int M, int N, int K, float alpha, const float* A, int lda,
                                                               const float* B, int ldb, float beta, float* C, int ldc,
                                                               GemmtuneBatch batch, int* workspace) {
  using L = gemmtune_fp16x3_layout;
  gemmtune_fp16x3_batch(batch, A, B, C);
  const L w(M, N, K, blockIdx.z);
  const int j0 = blockIdx.x * 1024 + threadIdx.x;
  gemmtune_fp16x3_column col[4];
  for (int t = 0; t < 4; ++t) {
    const int j = j0 + 256 * t;
    col[t] = j < N ? gemmtune_fp16x3_column{gemmtune_fp16x3_exponent(L::at<float>(workspace, w.scaleB())[j]),
                                            L::at<int>(workspace, w.flagB())[j] != 0}
                   : gemmtune_fp16x3_column{0, false};
  }
  const float* product = L::at<float>(workspace, w.product());
  const float* rowScales = L::at<float>(workspace, w.scaleA());
  const int* rowFlags = L::at<int>(workspace, w.flagA());
  for (int i = blockIdx.y; i < M; i += gridDim.y) {
    const int rowExponent = gemmtune_fp16x3_exponent(rowScales[i]);
    const bool rowFlag = rowFlags[i] != 0;
    const float* d = product + static_cast<long long>(i) * w.Np;
    float* c = C + static_cast<long long>(i) * ldc;
    for (int t = 0; t < 4; ++t) {
      const int j = j0 + 256 * t;
      if (j >= N) break;
      const float value = gemmtune_fp16x3_value<TRANS_A, TRANS_B>(d[j], rowExponent, rowFlag, col[t], i, j, K, alpha, A,
                                                                  lda, B, ldb);
      c[j] = beta == 0.0f ? value : fmaf(beta, c[j], value);
    }
  }
}
