// gemmtune kernel header: the warp tiling that warptile.cu and warppipe.cu share — the geometry
// and its rules, the multiply of one k tile held in shared memory, and the epilogue. The two
// kernels differ only in how k tiles reach shared memory (staging registers and a double buffer,
// or a cp.async pipeline). Includes only batch.cuh (the batch argument), for NVRTC.
//
// Shared-memory layout of one k tile (floats): A k-major, BK rows of BM + 4 (the padding keeps
// the lanes' float4 fragment reads apart in the banks, and the copies of an A stored with k
// contiguous, which scatter along k, too), then B k-major, BK rows of BN, or of BN + 4 when
// PAD_B (for a B stored with k contiguous, op(B) = T: its copies scatter along k like A's).
// Each block computes a BM x BN tile of C with THREADS / 32 warps; each warp owns a WM x WN warp
// tile split into WMITER x WNITER sub-tiles of WSUBM x WSUBN; each thread a TM x TN piece of every
// sub-tile (WMITER*TM x WNITER*TN results), its fragments double-buffered in registers.
#pragma once

#include "batch.cuh"

// Moves A, B and C to this block's matrices: those of batch blockIdx.z. They live in global
// memory (the launcher takes device pointers): said so, the compiler keeps global loads and
// stores for pointers read from the batch's pointer arrays (generic ones otherwise).
__device__ __forceinline__ void warpTileSelectBatch(const GemmtuneBatch& batch, const float*& A, const float*& B, float*& C) {
  gemmtune_select_batch(batch, blockIdx.z, A, B, C);
  __builtin_assume(__isGlobal(A));
  __builtin_assume(__isGlobal(B));
  __builtin_assume(__isGlobal(C));
}

template <int BM, int BN, int BK, int WM, int WN, int WNITER, int TM, int TN, int THREADS, bool PAD_B = false>
struct WarpTile {
  static_assert(THREADS >= 32 && THREADS % 32 == 0, "THREADS must be a positive multiple of the warp size");
  static_assert(THREADS <= 1024, "THREADS exceeds CUDA's 1024 per block");
  static_assert(BM >= 1 && BN >= 1 && WM >= 1 && WN >= 1 && WNITER >= 1, "tile edges must be positive");
  static_assert(TM >= 4 && TM % 4 == 0, "TM must be a positive multiple of 4 (A fragments read as float4)");
  static_assert(TN >= 4 && TN % 4 == 0, "TN must be a positive multiple of 4 (B fragments and C stores as float4)");
  static_assert(BK >= 4 && BK % 4 == 0, "BK must be a positive multiple of 4");
  static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles must tile the block tile exactly");
  static_assert((BM / WM) * (BN / WN) == THREADS / 32, "one warp tile per warp: (BM/WM)*(BN/WN) == THREADS/32");
  static_assert((WM * WN) % (32 * TM * TN * WNITER) == 0,
                "WM*WN must be a multiple of 32*TM*TN*WNITER (WMITER = WM*WN/(32*TM*TN*WNITER) integer)");
  static constexpr int WMITER = (WM * WN) / (32 * TM * TN * WNITER);
  static_assert(WMITER >= 1, "WMITER = WM*WN/(32*TM*TN*WNITER) must be at least 1");
  static_assert(WM % WMITER == 0 && WN % WNITER == 0, "WMITER must divide WM and WNITER must divide WN");
  static constexpr int WSUBM = WM / WMITER, WSUBN = WN / WNITER;
  static_assert(WSUBM % TM == 0 && WSUBN % TN == 0, "TM must divide WSUBM and TN must divide WSUBN");
  static_assert((WSUBM / TM) * (WSUBN / TN) == 32, "the 32 lanes must exactly cover a WSUBM x WSUBN sub-tile");

  static constexpr int kRows = WMITER * TM, kCols = WNITER * TN;  // results per thread
  static constexpr int kSA = BM + 4;                 // row stride of A in shared memory (floats)
  static constexpr int kSB = BN + (PAD_B ? 4 : 0);   // row stride of B in shared memory (floats)
  static constexpr int kStage = BK * (kSA + kSB);    // floats per k tile in shared memory

  static constexpr int kLanesN = WSUBN / TN;  // lanes across a sub-tile's columns

  // Where thread `tid` works: its warp's tile in the block, its lane's piece of each sub-tile,
  // and where its A and B fragments start in a k tile (floats). Take it just before the k loop:
  // taken at the kernel's top, ptxas kept it live across the loaders' setup (72 -> 79 registers
  // for a guarded 64x64 warptile, one block fewer per SM; `gemmtune ptx --stats`, sm_90).
  struct Place {
    int warpRow, warpCol, tRow, tCol, aFrag, bFrag;
  };
  __device__ static __forceinline__ Place place(int tid) {
    const int lane = tid % 32, warp = tid / 32;
    Place p;
    p.warpRow = warp / (BN / WN), p.warpCol = warp % (BN / WN);
    p.tRow = lane / kLanesN, p.tCol = lane % kLanesN;
    p.aFrag = p.warpRow * WM + p.tRow * TM;
    p.bFrag = BK * kSA + p.warpCol * WN + p.tCol * TN;
    return p;
  }

  __device__ static __forceinline__ void clear(float (&acc)[kRows][kCols]) {
#pragma unroll
    for (int i = 0; i < kRows; ++i)
#pragma unroll
      for (int j = 0; j < kCols; ++j) acc[i][j] = 0.0f;
  }

  // One fragment: RUNS runs of RUN values (one per sub-tile), STRIDE floats apart in shared
  // memory, read as float4.
  template <int RUNS, int RUN, int STRIDE>
  __device__ static __forceinline__ void unpack(float* dst, const float* src) {
#pragma unroll
    for (int w = 0; w < RUNS; ++w)
#pragma unroll
      for (int q = 0; q < RUN; q += 4) {
        const float4 v = *reinterpret_cast<const float4*>(src + w * STRIDE + q);
        dst[w * RUN + q] = v.x; dst[w * RUN + q + 1] = v.y; dst[w * RUN + q + 2] = v.z; dst[w * RUN + q + 3] = v.w;
      }
  }

  // acc += this thread's share of the k tile at `tile` (kStage floats of shared memory).
  __device__ static __forceinline__ void multiply(const float* tile, const Place& p, float (&acc)[kRows][kCols]) {
    float fa[2][kRows], fb[2][kCols];
    auto loadFrag = [&](int k, float* a, float* b) {
      unpack<WMITER, TM, WSUBM>(a, tile + p.aFrag + k * kSA);
      unpack<WNITER, TN, WSUBN>(b, tile + p.bFrag + k * kSB);
    };
    loadFrag(0, fa[0], fb[0]);
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      if (k + 1 < BK) loadFrag(k + 1, fa[(k + 1) & 1], fb[(k + 1) & 1]);
#pragma unroll
      for (int i = 0; i < kRows; ++i)
#pragma unroll
        for (int j = 0; j < kCols; ++j) acc[i][j] += fa[k & 1][i] * fb[k & 1][j];
    }
  }

  // C = alpha * acc + beta * C for this thread's results of the block tile at (rowBase, colBase);
  // beta == 0 never reads C. cVec: float4 loads and stores (C 16-byte aligned, ldc % 4 == 0 and,
  // guarded, N % 4 == 0: a group of 4 columns is then wholly inside or past N). GUARDED: rows
  // past M and columns past N are not stored.
  template <bool GUARDED>
  __device__ static __forceinline__ void store(const float (&acc)[kRows][kCols], int M, int N, float alpha, float beta,
                                               float* __restrict__ C, int ldc, int rowBase, int colBase, const Place& p,
                                               bool cVec) {
    const int warpRow = p.warpRow, warpCol = p.warpCol, tRow = p.tRow, tCol = p.tCol;
#pragma unroll
    for (int wi = 0; wi < WMITER; ++wi)
#pragma unroll
      for (int m = 0; m < TM; ++m) {
        const int row = rowBase + warpRow * WM + wi * WSUBM + tRow * TM + m;
        if (GUARDED && row >= M) continue;
        float* crow = C + row * ldc + colBase + warpCol * WN + tCol * TN;
#pragma unroll
        for (int wj = 0; wj < WNITER; ++wj) {
          float* cp = crow + wj * WSUBN;
          const float* r = &acc[wi * TM + m][wj * TN];
          const int col0 = colBase + warpCol * WN + wj * WSUBN + tCol * TN;
          if (cVec) {
#pragma unroll
            for (int n = 0; n < TN; n += 4) {
              if (GUARDED && col0 + n >= N) continue;
              float4 o = make_float4(alpha * r[n], alpha * r[n + 1], alpha * r[n + 2], alpha * r[n + 3]);
              if (beta != 0.0f) {
                const float4 c = *reinterpret_cast<const float4*>(cp + n);
                o.x += beta * c.x; o.y += beta * c.y; o.z += beta * c.z; o.w += beta * c.w;
              }
              *reinterpret_cast<float4*>(cp + n) = o;
            }
          } else {
#pragma unroll
            for (int n = 0; n < TN; ++n) {
              if (col0 + n < N) {
                float o = alpha * r[n];
                if (beta != 0.0f) o += beta * cp[n];
                cp[n] = o;
              }
            }
          }
        }
      }
  }
};
