// gemmtune kernel template: 2D-blocktiled SGEMM (family "blocktile2d").
//
// Each block computes a BM x BN tile of C; each thread computes a TM x TN sub-tile, so every
// shared-memory read of A feeds TN multiply-adds and every read of B feeds TM. A is stored
// TRANSPOSED in shared memory (BK rows of BM + 4 floats) so a thread reads its TM values of A for
// one k as float4s, like its TN values of B. The unguarded form loads A and B from global memory
// as float4 and stores C as float4.
//
// | parameter | meaning                                       | constraints                          |
// |-----------|-----------------------------------------------|--------------------------------------|
// | BM, BN    | C tile per block (rows, columns)              | multiples of TM and TN, of 4         |
// | BK        | depth of the A and B tiles in shared memory   | multiple of 4                        |
// | TM, TN    | results per thread (rows, columns)            | multiples of 4                       |
// | GUARDED   | true: any shape and alignment; false: below   | -                                    |
//
// Threads per block: (BM / TM) * (BN / TN), a multiple of 32 and at most 1024.
// Grid: (ceil(N / BN), ceil(M / BM)), blockIdx.x over N. Dynamic shared memory:
// (BM + 4 + BN) * BK * 4 bytes (above 48 KiB the launcher opts in). No static shared memory.
// Preconditions, both forms: M, N, K >= 1; lda >= K, ldb >= N, ldc >= N; 4-byte aligned A, B, C;
// (M + BM) * lda, (K + BK) * ldb and (M + BM) * ldc below 2^31 (32-bit offsets, formed up to
// one tile past the last row or k step). GUARDED == false additionally: BM | M,
// BN | N, BK | K; A, B, C 16-byte aligned; lda, ldb, ldc multiples of 4.
// Contract shared by every gemmtune template: row-major C = alpha * A * B + beta * C with
// A M x K (lda), B K x N (ldb), C M x N (ldc); beta == 0 never reads C.
// Includes only batch.cuh (the batch argument) for NVRTC.

#include "batch.cuh"

template <int BM, int BN, int BK, int TM, int TN, bool GUARDED, bool TRANS_A, bool TRANS_B>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
    sgemm_blocktile_2d(int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
                       const float* __restrict__ B, int ldb, float beta, float* __restrict__ C, int ldc, GemmtuneBatch batch) {
  static_assert(TM >= 4 && TM % 4 == 0 && TN >= 4 && TN % 4 == 0, "TM and TN must be positive multiples of 4");
  static_assert(BM % TM == 0 && BN % TN == 0, "TM must divide BM and TN must divide BN");
  static_assert(BK >= 4 && BK % 4 == 0, "BK must be a positive multiple of 4 (A is loaded as float4 along k)");
  static_assert(BN % 4 == 0, "BN must be a multiple of 4 (B is loaded as float4 along n)");
  constexpr int kThreads = (BM / TM) * (BN / TN);
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "(BM/TM)*(BN/TN) threads: whole warps, at most 1024");
  constexpr int kSA = BM + 4;                   // row stride of transposed A (floats), keeps float4 alignment
  constexpr int kAVec = BM * BK / 4, kBVec = BK * BN / 4;  // float4 slots of the A and B tiles
  constexpr int kAIters = (kAVec + kThreads - 1) / kThreads, kBIters = (kBVec + kThreads - 1) / kThreads;

  extern __shared__ float4 smem4[];
  float* As = reinterpret_cast<float*>(smem4);  // As[k * kSA + m]
  float* Bs = As + BK * kSA;                     // Bs[k * BN + n]

  const int tid = threadIdx.x;
  const int tRow = tid / (BN / TN), tCol = tid % (BN / TN);  // this thread's TM x TN sub-tile
  const int rowBase = blockIdx.y * BM, colBase = blockIdx.x * BN;

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  for (int k0 = 0; k0 < K; k0 += BK) {
    // A tile: slot s covers row s / (BK/4), k quad s % (BK/4); stored transposed.
#pragma unroll
    for (int it = 0; it < kAIters; ++it) {
      const int s = tid + it * kThreads;
      if (kAVec % kThreads == 0 || s < kAVec) {
        const int r = s / (BK / 4), kq = (s % (BK / 4)) * 4;
        float4 v;
        if (!GUARDED) {
          v = *reinterpret_cast<const float4*>(A + (rowBase + r) * lda + k0 + kq);
        } else {
          // Offsets only of rows that exist: (M + BM) * lda may not fit in 32 bits.
          const bool rowOk = rowBase + r < M;
          const float* a = A + (rowOk ? rowBase + r : 0) * lda + k0 + kq;
          v.x = (rowOk && k0 + kq + 0 < K) ? a[0] : 0.0f;
          v.y = (rowOk && k0 + kq + 1 < K) ? a[1] : 0.0f;
          v.z = (rowOk && k0 + kq + 2 < K) ? a[2] : 0.0f;
          v.w = (rowOk && k0 + kq + 3 < K) ? a[3] : 0.0f;
        }
        As[(kq + 0) * kSA + r] = v.x;
        As[(kq + 1) * kSA + r] = v.y;
        As[(kq + 2) * kSA + r] = v.z;
        As[(kq + 3) * kSA + r] = v.w;
      }
    }
    // B tile: slot s covers k row s / (BN/4), column quad s % (BN/4).
#pragma unroll
    for (int it = 0; it < kBIters; ++it) {
      const int s = tid + it * kThreads;
      if (kBVec % kThreads == 0 || s < kBVec) {
        const int kr = s / (BN / 4), cq = (s % (BN / 4)) * 4;
        float4 v;
        if (!GUARDED) {
          v = *reinterpret_cast<const float4*>(B + (k0 + kr) * ldb + colBase + cq);
        } else {
          const bool kOk = k0 + kr < K;
          const int gc = colBase + cq;
          const float* b = B + (kOk ? k0 + kr : 0) * ldb + gc;
          v.x = (kOk && gc + 0 < N) ? b[0] : 0.0f;
          v.y = (kOk && gc + 1 < N) ? b[1] : 0.0f;
          v.z = (kOk && gc + 2 < N) ? b[2] : 0.0f;
          v.w = (kOk && gc + 3 < N) ? b[3] : 0.0f;
        }
        *reinterpret_cast<float4*>(Bs + kr * BN + cq) = v;
      }
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM; i += 4) {
        const float4 v = *reinterpret_cast<const float4*>(As + k * kSA + tRow * TM + i);
        a[i] = v.x, a[i + 1] = v.y, a[i + 2] = v.z, a[i + 3] = v.w;
      }
#pragma unroll
      for (int j = 0; j < TN; j += 4) {
        const float4 v = *reinterpret_cast<const float4*>(Bs + k * BN + tCol * TN + j);
        b[j] = v.x, b[j + 1] = v.y, b[j + 2] = v.z, b[j + 3] = v.w;
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int row = rowBase + tRow * TM + i;
    if (!GUARDED) {
      float* c = C + row * ldc + colBase + tCol * TN;
#pragma unroll
      for (int j = 0; j < TN; j += 4) {
        float4 v = make_float4(alpha * acc[i][j], alpha * acc[i][j + 1], alpha * acc[i][j + 2], alpha * acc[i][j + 3]);
        if (beta != 0.0f) {
          const float4 old = *reinterpret_cast<const float4*>(c + j);
          v.x += beta * old.x, v.y += beta * old.y, v.z += beta * old.z, v.w += beta * old.w;
        }
        *reinterpret_cast<float4*>(c + j) = v;
      }
    } else if (row < M) {
      float* c = C + row * ldc + colBase + tCol * TN;
#pragma unroll
      for (int j = 0; j < TN; ++j)
        if (colBase + tCol * TN + j < N)
          c[j] = beta == 0.0f ? alpha * acc[i][j] : alpha * acc[i][j] + beta * c[j];
    }
  }
}
