// gemmtune kernel template: warp-tiled SGEMM (family "warptile").
//
// Each block computes a BM x BN tile of C with THREADS / 32 warps; each warp owns a WM x WN warp
// tile, split into WMITER x WNITER sub-tiles of WSUBM x WSUBN (WSUBM = WM / WMITER,
// WSUBN = WN / WNITER); each thread computes a TM x TN piece of every sub-tile, i.e.
// WMITER*TM x WNITER*TN results. A is stored TRANSPOSED in shared memory (BK rows of BM + 4
// floats) and B as is (BK rows of BN floats), so for every k a thread reads its A and B fragments
// as float4s; the lanes of a sub-tile read consecutive float4s (no bank conflicts). Shared memory
// is double-buffered: the next k tile is fetched from global memory into registers (float4 loads
// in the unguarded form) while the current one is multiplied, then stored to the other buffer,
// one barrier per k tile. Fragments are register double-buffered (next k read while this k
// multiplies).
//
// | parameter | meaning                                              | constraints                          |
// |-----------|------------------------------------------------------|--------------------------------------|
// | BM, BN    | C tile per block (rows, columns)                     | BM % WM == 0, BN % WN == 0           |
// | BK        | depth of a k tile in shared memory                   | multiple of 4                        |
// | WM, WN    | warp tile (rows, columns)                            | (BM/WM)*(BN/WN) == THREADS/32        |
// | WNITER    | sub-tiles across the warp tile's columns             | WN % (WNITER*TN) == 0                |
// | TM, TN    | results per thread in each sub-tile (rows, columns)  | multiples of 4                       |
// | THREADS   | threads per block                                    | multiple of 32, <= 1024              |
// | GUARDED   | true: any shape/alignment; false: see below          | -                                    |
// | (derived) | WMITER = WM*WN / (32*TM*TN*WNITER), sub-tile lanes    | WMITER >= 1 integer, WM % WMITER == 0|
// |           | (WSUBM/TM) * (WSUBN/TN) == 32                        | WSUBM % TM == 0, WSUBN % TN == 0     |
//
// Preconditions (enforced by the launcher):
//   both forms: M, N, K >= 1; lda >= K, ldb >= N, ldc >= N; A, B, C 4-byte aligned;
//               (M + BM) * lda, (K + BK) * ldb and (M + BM) * ldc each < 2^31 (offsets are
//               32-bit ints, formed up to one tile past the last row or k step).
//   GUARDED == false additionally: M % BM == 0, N % BN == 0, K % BK == 0; A, B and C 16-byte
//               aligned; lda, ldb and ldc multiples of 4 (float4 loads of A and B, float4
//               loads/stores of C).
//   GUARDED == true: nothing beyond "both forms". Rows of A past M and columns of B past N are
//               loaded clamped (they only feed results that are never stored); k past K is
//               zeroed in both A and B. The partial k tile (K % BK != 0) is multiplied first, so
//               the main loop loads only full k tiles, with no per-element checks. Loads are
//               float4 where provably safe, decided once per launch (uniform branch): A when A is
//               16-byte aligned and lda % 4 == 0 (full k tiles; the k tail is scalar); B when B
//               is 16-byte aligned, ldb % 4 == 0 and N % 4 == 0; C likewise with ldc; scalar
//               otherwise. C stores are bounds-checked.
// Threads per block: THREADS. Grid: (ceil(N / BN), ceil(M / BM)), blockIdx.x over N.
// Dynamic shared memory: 2 * BK * (BM + 4 + BN) * 4 bytes (above 48 KiB the launcher opts in with
// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES). No static shared memory.
// Contract shared by every gemmtune template: row-major C = alpha * A * B + beta * C with
// A M x K (lda), B K x N (ldb), C M x N (ldc); beta == 0 never reads C.
// Includes warp_tile.cuh (the warp tiling, its fragment multiply and epilogue; a family header).

#include "warp_tile.cuh"
#include "batch.cuh"

template <int BM, int BN, int BK, int WM, int WN, int WNITER, int TM, int TN, int THREADS, bool GUARDED, bool TRANS_A, bool TRANS_B>
__global__ void __launch_bounds__(THREADS)
    sgemm_warptile(int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
                   const float* __restrict__ B, int ldb, float beta, float* __restrict__ C, int ldc, GemmtuneBatch batch) {
  using Tile = WarpTile<BM, BN, BK, WM, WN, WNITER, TM, TN, THREADS>;  // its static_asserts check the tiling
  constexpr int kSA = Tile::kSA;            // row stride of transposed A in shared memory (floats)
  constexpr int kStage = Tile::kStage;      // floats per shared-memory buffer
  constexpr int kAVec = BM * BK / 4;        // float4 slots of an A tile
  constexpr int kBVec = BK * BN / 4;        // float4 slots of a B tile
  constexpr int kAIters = (kAVec + THREADS - 1) / THREADS;
  constexpr int kBIters = (kBVec + THREADS - 1) / THREADS;

  extern __shared__ float4 smem4[];  // float4: 16-byte aligned base
  float* smem = reinterpret_cast<float*>(smem4);

  const int tid = threadIdx.x;
  const int rowBase = blockIdx.y * BM, colBase = blockIdx.x * BN;

  // ---- global -> register loader (slot i: A row i/(BK/4), k quad i%(BK/4); B row i/(BN/4)) ----
  float4 ra[kAIters], rb[kBIters];
  const float* Ag = A + (GUARDED ? 0 : rowBase * lda);
  const float* Bg = B + (GUARDED ? 0 : colBase);

  // Guarded form: float4 paths are still used where they are provably safe, decided once per
  // launch (uniform, no divergence): A when A is 16-byte aligned and lda % 4 == 0 (full k tiles
  // only; rows clamped); B when B is 16-byte aligned, ldb % 4 == 0 and N % 4 == 0 (a float4
  // group is then wholly inside or wholly past N; groups past N are clamped); C likewise with ldc.
  const bool aVec = !GUARDED || ((reinterpret_cast<unsigned long long>(A) & 15) == 0 && (lda & 3) == 0);
  const bool bVec = !GUARDED || ((reinterpret_cast<unsigned long long>(B) & 15) == 0 && (ldb & 3) == 0 && (N & 3) == 0);
  const bool cVec = !GUARDED || ((reinterpret_cast<unsigned long long>(C) & 15) == 0 && (ldc & 3) == 0 && (N & 3) == 0);

  // Guarded form: 32-bit offsets (from A, B) of each slot's data in the next full k tile, advanced
  // by one tile per load. Rows of A past M are clamped to M - 1. Columns of B past N: float4 path,
  // a group past N is clamped to N - 4; scalar path, columns past N are not loaded (bLast[it] =
  // columns of the group inside N). Either way they only feed results that are never stored.
  int aOff[kAIters], bOff[kBIters], bLast[kBIters];
  if (GUARDED) {
#pragma unroll
    for (int it = 0; it < kAIters; ++it) {
      const int i = tid + it * THREADS;
      const int r = i / (BK / 4), kq = (i % (BK / 4)) * 4;
      aOff[it] = (kAVec % THREADS == 0 || i < kAVec) ? min(rowBase + r, M - 1) * lda + kq : 0;
    }
#pragma unroll
    for (int it = 0; it < kBIters; ++it) {
      const int i = tid + it * THREADS;
      const int k = i / (BN / 4), c = colBase + (i % (BN / 4)) * 4;
      const bool live = kBVec % THREADS == 0 || i < kBVec;
      bOff[it] = live ? k * ldb + (aVec && bVec ? min(c, N - 4) : c) : 0;
      bLast[it] = N - c;
    }
  }
  const int bStep = BK * ldb;

  // Guarded scalar path: a global load predicated in PTX (no branch, which keeps the scalar main
  // loop's loads ahead of its FFMAs; ptxas sinks a conditional block of loads behind them).
  auto ldgIf = [](const float* p, bool on) {
    float v;
    asm volatile("{\n\t.reg .pred q;\n\t.reg .u64 g;\n\tsetp.ne.b32 q, %2, 0;\n\tcvta.to.global.u64 g, %1;\n\t"
                 "@q ld.global.nc.f32 %0, [g];\n\t}"
                 : "=f"(v) : "l"(p), "r"((int)on));
    return v;
  };
  // A full k tile: at k0 (unguarded), at the offsets above (guarded; then advanced). vec: float4
  // loads (always in the unguarded form); on: the guarded scalar path's load predicate.
  auto loadFull = [&](int k0, bool vec, bool on = true) {
#pragma unroll
    for (int it = 0; it < kAIters; ++it) {
      const int i = tid + it * THREADS;
      if (kAVec % THREADS == 0 || i < kAVec) {
        const int r = i / (BK / 4), kq = (i % (BK / 4)) * 4;
        if (!GUARDED) {
          ra[it] = *reinterpret_cast<const float4*>(Ag + r * lda + k0 + kq);
        } else {
          const float* p = A + aOff[it];
          if (vec) ra[it] = __ldg(reinterpret_cast<const float4*>(p));
          else ra[it] = make_float4(ldgIf(p, on), ldgIf(p + 1, on), ldgIf(p + 2, on), ldgIf(p + 3, on));
          aOff[it] += BK;
        }
      }
    }
#pragma unroll
    for (int it = 0; it < kBIters; ++it) {
      const int i = tid + it * THREADS;
      if (kBVec % THREADS == 0 || i < kBVec) {
        const int k = i / (BN / 4), c = (i % (BN / 4)) * 4;
        if (!GUARDED) {
          rb[it] = *reinterpret_cast<const float4*>(Bg + (k0 + k) * ldb + c);
        } else {
          const float* p = B + bOff[it];
          if (vec) rb[it] = __ldg(reinterpret_cast<const float4*>(p));
          else rb[it] = make_float4(ldgIf(p, on && 0 < bLast[it]), ldgIf(p + 1, on && 1 < bLast[it]),
                                    ldgIf(p + 2, on && 2 < bLast[it]), ldgIf(p + 3, on && 3 < bLast[it]));
          bOff[it] += bStep;
        }
      }
    }
  };
  // Guarded form only: the partial k tile at k0 (k0 < K < k0 + BK); k past K is zeroed in A and B.
  auto loadTail = [&](int k0) {
#pragma unroll
    for (int it = 0; it < kAIters; ++it) {
      const int i = tid + it * THREADS;
      if (kAVec % THREADS == 0 || i < kAVec) {
        const int r = i / (BK / 4), kq = (i % (BK / 4)) * 4;
        const float* p = A + min(rowBase + r, M - 1) * lda;
        float v[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const int gk = k0 + kq + j;
          v[j] = (gk < K) ? p[min(gk, K - 1)] : 0.0f;
        }
        ra[it] = make_float4(v[0], v[1], v[2], v[3]);
      }
    }
#pragma unroll
    for (int it = 0; it < kBIters; ++it) {
      const int i = tid + it * THREADS;
      if (kBVec % THREADS == 0 || i < kBVec) {
        const int k = i / (BN / 4), c = (i % (BN / 4)) * 4;
        const int gk = k0 + k;
        const float* p = B + min(gk, K - 1) * ldb;
        float v[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const float x = p[min(colBase + c + j, N - 1)];
          v[j] = gk < K ? x : 0.0f;
        }
        rb[it] = make_float4(v[0], v[1], v[2], v[3]);
      }
    }
  };
  auto storeTile = [&](float* stage) {
    float* As = stage;
    float* Bs = stage + BK * kSA;
#pragma unroll
    for (int it = 0; it < kAIters; ++it) {
      const int i = tid + it * THREADS;
      if (kAVec % THREADS == 0 || i < kAVec) {
        const int r = i / (BK / 4), kq = (i % (BK / 4)) * 4;
        As[(kq + 0) * kSA + r] = ra[it].x;
        As[(kq + 1) * kSA + r] = ra[it].y;
        As[(kq + 2) * kSA + r] = ra[it].z;
        As[(kq + 3) * kSA + r] = ra[it].w;
      }
    }
#pragma unroll
    for (int it = 0; it < kBIters; ++it) {
      const int i = tid + it * THREADS;
      if (kBVec % THREADS == 0 || i < kBVec) {
        const int k = i / (BN / 4), c = (i % (BN / 4)) * 4;
        *reinterpret_cast<float4*>(Bs + k * BN + c) = rb[it];
      }
    }
  };

  float acc[Tile::kRows][Tile::kCols];
  Tile::clear(acc);
  const typename Tile::Place place = Tile::place(tid);

  // Tile order: the guarded form's k tail (if K % BK != 0) first, then the full tiles 0, BK, ...,
  // so the main loop only ever prefetches full tiles.
  const int nFull = K / BK;
  const bool hasTail = GUARDED && nFull * BK < K;
  const int nTiles = nFull + (hasTail ? 1 : 0);
  const bool vec = !GUARDED || (aVec && bVec);
  if (hasTail) loadTail(nFull * BK);
  else if (!GUARDED || vec) loadFull(0, true);
  else loadFull(0, false);
  storeTile(smem);
  __syncthreads();

  // Main loop: tile t is multiplied while tile t + 1 is fetched into registers (float4 loads).
  // The guarded form runs it when vec, else the copy below with scalar loads.
  if (!GUARDED || vec) {
  for (int t = 0; t < nTiles; ++t) {
    const float* cur = smem + (t & 1) * kStage;
    const bool more = t + 1 < nTiles;
    if (more) loadFull((t + 1) * BK, true);  // k0 is used by the unguarded form only (no tail there)

    Tile::multiply(cur, place, acc);

    if (more) storeTile(smem + ((t + 1) & 1) * kStage);
    __syncthreads();
  }
  } else {
  // Guarded form, scalar loads: the same loop (kept as a separate copy of the text, so that the
  // float4 loop above compiles exactly as in the unguarded form), loads predicated (see ldgIf).
  for (int t = 0; t < nTiles; ++t) {
    const float* cur = smem + (t & 1) * kStage;
    const bool more = t + 1 < nTiles;
    loadFull(0, false, more);

    Tile::multiply(cur, place, acc);

    if (more) storeTile(smem + ((t + 1) & 1) * kStage);
    __syncthreads();
  }
  }

  // ---- epilogue ----
  Tile::template store<GUARDED>(acc, M, N, alpha, beta, C, ldc, rowBase, colBase, place, cVec);
}
