// gemmtune kernel template: warp-tiled SGEMM with a cp.async pipeline (family "warppipe").
//
// The warp tiling of warptile.cu (BM x BN per block, WM x WN per warp in WMITER x WNITER
// sub-tiles, TM x TN per thread in each; A transposed in shared memory with rows of BM + 4 floats,
// fragments read as float4 and double-buffered in registers), but k tiles reach shared memory
// through a STAGES-deep cp.async pipeline (sm_80+) instead of staging registers: STAGES - 1 tiles
// are in flight while one is multiplied, one barrier per k tile, and no registers hold tiles on
// their way. A is copied one float at a time into its transposed place: the lanes of a warp copy
// KC (8, or 4 where BK is not a multiple of 8) consecutive k of 32 / KC rows, so the global
// reads are whole 32-byte sectors and, with the BM + 4 row stride, the shared-memory writes fall
// in 32 different banks. B is copied 16 bytes at a time (unguarded form) or one float at a time
// (guarded form).
//
// | parameter | meaning                                              | constraints                          |
// |-----------|------------------------------------------------------|--------------------------------------|
// | BM .. THREADS | as warptile.cu                                   | as warptile.cu                       |
// | STAGES    | k tiles in shared memory (in flight + multiplied)   | >= 2                                 |
// | GUARDED   | true: any shape/alignment; false: see below          | -                                    |
//
// Preconditions (enforced by the launcher):
//   both forms: M, N, K >= 1; lda >= K, ldb >= N, ldc >= N; A, B, C 4-byte aligned;
//               (M + BM) * lda, (K + BK) * ldb and (M + BM) * ldc each < 2^31 (32-bit offsets).
//   GUARDED == false additionally: M % BM == 0, N % BN == 0, K % BK == 0; B and C 16-byte aligned;
//               ldb and ldc multiples of 4 (16-byte copies of B, float4 loads/stores of C).
//   GUARDED == true: nothing more. A copy of an element outside A or B reads nothing and fills a
//               zero (cp.async with source size 0), so the k tail needs no special case; C
//               stores are bounds-checked, float4 where C is 16-byte aligned, ldc % 4 == 0 and
//               N % 4 == 0 (decided once per launch).
// Threads per block: THREADS. Grid: (ceil(N / BN), ceil(M / BM)), blockIdx.x over N.
// Dynamic shared memory: STAGES * BK * (BM + 4 + BN) * 4 bytes (above 48 KiB the launcher opts in).
// Contract shared by every gemmtune template: row-major C = alpha * A * B + beta * C with
// A M x K (lda), B K x N (ldb), C M x N (ldc); beta == 0 never reads C.
// Self-contained (no includes) for NVRTC.

template <int BM, int BN, int BK, int WM, int WN, int WNITER, int TM, int TN, int THREADS, int STAGES, bool GUARDED>
__global__ void __launch_bounds__(THREADS)
    sgemm_warppipe(int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
                   const float* __restrict__ B, int ldb, float beta, float* __restrict__ C, int ldc) {
  static_assert(THREADS >= 32 && THREADS % 32 == 0 && THREADS <= 1024, "THREADS: whole warps, at most 1024");
  static_assert(TM >= 4 && TM % 4 == 0 && TN >= 4 && TN % 4 == 0, "TM and TN: multiples of 4 (float4 fragments)");
  static_assert(BK >= 4 && BK % 4 == 0, "BK must be a positive multiple of 4");
  static_assert(BM % 32 == 0, "BM must be a multiple of 32 (the BM + 4 row stride spreads A's copies over the banks)");
  static_assert(BN % 4 == 0, "BN must be a multiple of 4 (16-byte copies of B)");
  static_assert(STAGES >= 2, "STAGES must be at least 2 (one tile lands while another is multiplied)");
  static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles must tile the block tile exactly");
  static_assert((BM / WM) * (BN / WN) == THREADS / 32, "one warp tile per warp: (BM/WM)*(BN/WN) == THREADS/32");
  static_assert((WM * WN) % (32 * TM * TN * WNITER) == 0, "WMITER = WM*WN/(32*TM*TN*WNITER) must be whole");
  constexpr int WMITER = (WM * WN) / (32 * TM * TN * WNITER);
  static_assert(WMITER >= 1 && WM % WMITER == 0 && WN % WNITER == 0, "sub-tile edges must be whole");
  constexpr int WSUBM = WM / WMITER, WSUBN = WN / WNITER;
  static_assert(WSUBM % TM == 0 && WSUBN % TN == 0 && (WSUBM / TM) * (WSUBN / TN) == 32,
                "the 32 lanes must exactly cover a WSUBM x WSUBN sub-tile");

  constexpr int kLanesN = WSUBN / TN;
  constexpr int kSA = BM + 4;               // row stride of transposed A in shared memory (floats)
  constexpr int kStage = BK * (kSA + BN);   // floats per pipeline stage
  constexpr int KC = BK % 8 == 0 ? 8 : 4;   // consecutive k of one row that neighbouring lanes copy
  constexpr int kAIters = (BM * BK + THREADS - 1) / THREADS;
  constexpr int kBVec = GUARDED ? 1 : 4;
  constexpr int kBSlots = BK * BN / kBVec;
  constexpr int kBIters = (kBSlots + THREADS - 1) / THREADS;
  // The guarded form's copy loops unroll by 4 only: fully unrolled, ptxas keeps every copy's
  // address live across the k loop.
  constexpr int kUnrollA = GUARDED ? 4 : kAIters, kUnrollB = GUARDED ? 4 : kBIters;

  extern __shared__ float4 smem4[];
  float* const smem = reinterpret_cast<float*>(smem4);

  const int tid = threadIdx.x;
  const int lane = tid % 32, warp = tid / 32;
  const int warpRow = warp / (BN / WN), warpCol = warp % (BN / WN);
  const int tRow = lane / kLanesN, tCol = lane % kLanesN;
  const int rowBase = blockIdx.y * BM, colBase = blockIdx.x * BN;

  // A source size of 0 reads nothing and fills zeros (the guarded form's out-of-range elements).
  auto copy4 = [](float* dst, const float* src, bool on) {
    const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(d), "l"(src), "r"(on ? 4 : 0));
  };
  auto copy16 = [](float* dst, const float* src) {
    const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(src));
  };

  const int nTiles = (K + BK - 1) / BK;  // the unguarded form: K % BK == 0
  // Starts the copies of k tile `tile` into `stage`, then closes a commit group (an empty one past
  // the last tile, so that every iteration waits for the same group count).
  auto issue = [&](int tile, float* stage) {
    if (tile < nTiles) {
      float* const As = stage;
      float* const Bs = stage + BK * kSA;
      const int k0 = tile * BK;
#pragma unroll kUnrollA
      for (int it = 0; it < kAIters; ++it) {
        const int s = tid + it * THREADS;
        if ((BM * BK) % THREADS == 0 || s < BM * BK) {
          const int kLo = s % KC, rest = s / KC;
          const int r = rest % BM, k = (rest / BM) * KC + kLo;
          const bool on = !GUARDED || (rowBase + r < M && k0 + k < K);
          // Offsets only of elements that exist: (M + BM) * lda may not fit in 32 bits.
          copy4(As + k * kSA + r, on ? A + (rowBase + r) * lda + k0 + k : A, on);
        }
      }
#pragma unroll kUnrollB
      for (int it = 0; it < kBIters; ++it) {
        const int s = tid + it * THREADS;
        if (kBSlots % THREADS == 0 || s < kBSlots) {
          if constexpr (!GUARDED) {
            const int kr = s / (BN / 4), cq = (s % (BN / 4)) * 4;
            copy16(Bs + kr * BN + cq, B + (k0 + kr) * ldb + colBase + cq);
          } else {
            const int kr = s / BN, c = s % BN;
            const bool on = k0 + kr < K && colBase + c < N;
            copy4(Bs + kr * BN + c, on ? B + (k0 + kr) * ldb + colBase + c : B, on);
          }
        }
      }
    }
    asm volatile("cp.async.commit_group;\n" ::);
  };

  float acc[WMITER * TM][WNITER * TN];
#pragma unroll
  for (int i = 0; i < WMITER * TM; ++i)
#pragma unroll
    for (int j = 0; j < WNITER * TN; ++j) acc[i][j] = 0.0f;

  const int aFrag = warpRow * WM + tRow * TM;
  const int bFrag = BK * kSA + warpCol * WN + tCol * TN;

#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) issue(s, smem + s * kStage);
  int readStage = 0, writeStage = STAGES - 1;
  for (int t = 0; t < nTiles; ++t) {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2));  // tile t has landed (this thread's copies)
    __syncthreads();  // ... everyone's; and every thread is done with the stage refilled next
    issue(t + STAGES - 1, smem + writeStage * kStage);
    const float* cur = smem + readStage * kStage;
    readStage = readStage + 1 == STAGES ? 0 : readStage + 1;
    writeStage = writeStage + 1 == STAGES ? 0 : writeStage + 1;

    float fa[2][WMITER * TM], fb[2][WNITER * TN];
    auto loadFrag = [&](int k, float* a, float* b) {
      const float* as = cur + aFrag + k * kSA;
      const float* bs = cur + bFrag + k * BN;
#pragma unroll
      for (int wi = 0; wi < WMITER; ++wi)
#pragma unroll
        for (int m = 0; m < TM; m += 4) {
          const float4 v = *reinterpret_cast<const float4*>(as + wi * WSUBM + m);
          a[wi * TM + m] = v.x; a[wi * TM + m + 1] = v.y; a[wi * TM + m + 2] = v.z; a[wi * TM + m + 3] = v.w;
        }
#pragma unroll
      for (int wj = 0; wj < WNITER; ++wj)
#pragma unroll
        for (int n = 0; n < TN; n += 4) {
          const float4 v = *reinterpret_cast<const float4*>(bs + wj * WSUBN + n);
          b[wj * TN + n] = v.x; b[wj * TN + n + 1] = v.y; b[wj * TN + n + 2] = v.z; b[wj * TN + n + 3] = v.w;
        }
    };
    loadFrag(0, fa[0], fb[0]);
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      if (k + 1 < BK) loadFrag(k + 1, fa[(k + 1) & 1], fb[(k + 1) & 1]);
#pragma unroll
      for (int i = 0; i < WMITER * TM; ++i)
#pragma unroll
        for (int j = 0; j < WNITER * TN; ++j) acc[i][j] += fa[k & 1][i] * fb[k & 1][j];
    }
  }
  asm volatile("cp.async.wait_all;\n" ::);  // no copy may outlive the block (empty groups only, but to be sure)

  // ---- epilogue: float4 where C allows (always in the unguarded form) ----
  const bool cVec = !GUARDED || ((reinterpret_cast<unsigned long long>(C) & 15) == 0 && (ldc & 3) == 0 && (N & 3) == 0);
#pragma unroll
  for (int wi = 0; wi < WMITER; ++wi)
#pragma unroll
    for (int m = 0; m < TM; ++m) {
      const int row = rowBase + warpRow * WM + wi * WSUBM + tRow * TM + m;
      if (GUARDED && row >= M) continue;
#pragma unroll
      for (int wj = 0; wj < WNITER; ++wj) {
        const int col0 = colBase + warpCol * WN + wj * WSUBN + tCol * TN;
        float* cp = C + row * ldc + col0;
        const float* r = &acc[wi * TM + m][wj * TN];
        if (cVec) {
#pragma unroll
          for (int n = 0; n < TN; n += 4) {
            if (GUARDED && col0 + n >= N) continue;  // N % 4 == 0 here: a group is all in or all out
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
