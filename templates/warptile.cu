// gemmtune kernel template: warp-tiled SGEMM (family "warptile").
//
// Each block computes a BM x BN tile of C with THREADS / 32 warps; each warp owns a WM x WN warp
// tile, split into WMITER x WNITER sub-tiles of WSUBM x WSUBN (WSUBM = WM / WMITER,
// WSUBN = WN / WNITER); each thread computes a TM x TN piece of every sub-tile, i.e.
// WMITER*TM x WNITER*TN results. A and B are both k-major in shared memory whatever the layout
// (A: BK rows of BM + 4 floats; B: BK rows of BN floats, BN + 4 when TRANS_B), so for every k a
// thread reads its A and B fragments as float4s; the lanes of a sub-tile read consecutive float4s
// (no bank conflicts). Shared memory is double-buffered: the next k tile is fetched from global
// memory into registers (float4 loads in the unguarded form) while the current one is
// multiplied, then stored to the other buffer, one barrier per k tile. An operand stored with k
// contiguous (A for op N, B for op T) is loaded as float4s along k and stored as 4 scalars down
// the k rows (the + 4 padding keeps those stores apart in the banks); one stored with M or N
// contiguous (A for op T, B for op N) is loaded and stored as float4s along its rows. Fragments are
// register double-buffered (next k read while this k multiplies).
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
// | TRANS_A   | A stored K rows of M (op T), else M rows of K        | -                                    |
// | TRANS_B   | B stored N rows of K (op T), else K rows of N        | -                                    |
// | (derived) | WMITER = WM*WN / (32*TM*TN*WNITER), sub-tile lanes    | WMITER >= 1 integer, WM % WMITER == 0|
// |           | (WSUBM/TM) * (WSUBN/TN) == 32                        | WSUBM % TM == 0, WSUBN % TN == 0     |
//
// Preconditions (enforced by the launcher):
//   both forms: M, N, K >= 1; lda, ldb >= the stored row length (lda >= K, or M when TRANS_A;
//               ldb >= N, or K when TRANS_B), ldc >= N; A, B, C 4-byte aligned; (stored rows +
//               a tile) * ld < 2^31 for A and B ((M + BM) * lda, or (K + BK) * lda when TRANS_A;
//               (K + BK) * ldb, or (N + BN) * ldb when TRANS_B) and (M + BM) * ldc < 2^31 (offsets
//               within a matrix are 32-bit ints, formed up to one tile past the last row or k step).
//   GUARDED == false additionally: M % BM == 0, N % BN == 0, K % BK == 0; A, B and C 16-byte
//               aligned; lda, ldb and ldc multiples of 4 (float4 loads of A and B, float4
//               loads/stores of C).
//   GUARDED == true: nothing beyond "both forms". Rows and columns of A past M and of B past N
//               are loaded clamped or not at all (they only feed results that are never stored);
//               k past K is zeroed in both A and B. The partial k tile (K % BK != 0) is multiplied
//               first, so the main loop loads only full k tiles, with no per-element checks.
//               Full k tiles are loaded as float4s when both operands allow it, decided once per
//               block (uniform branch; every block of a batch decides alike): an operand stored
//               with k contiguous when it is 16-byte aligned and its ld % 4 == 0 (the k tail is
//               scalar), one stored with M or N contiguous when moreover M or N % 4 == 0; scalar
//               otherwise. C likewise with ldc and N % 4 == 0; C stores are bounds-checked.
// Batches: blockIdx.z is the batch; batch b reads and writes the matrices gemmtune_select_batch
//   gives (batch.cuh), each meeting the preconditions above (the launcher checks their base
//   and stride, or takes pointer arrays as 4-byte aligned).
// Threads per block: THREADS. Grid: (ceil(N / BN), ceil(M / BM), batches), blockIdx.x over N.
// Dynamic shared memory: 2 * BK * (BM + 4 + BN + (TRANS_B ? 4 : 0)) * 4 bytes (above 48 KiB the
// launcher opts in with CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES). No static shared memory.
// Contract shared by every gemmtune template: row-major C = alpha * op(A) * op(B) + beta * C with
// op(A) M x K (lda), op(B) K x N (ldb), C M x N (ldc); beta == 0 never reads C.
// Includes warp_tile.cuh (the warp tiling, its fragment multiply, epilogue and batch selection;
// a family header, which includes batch.cuh).

#include "warp_tile.cuh"

// Guarded scalar path: a global load predicated in PTX (no branch, which keeps the scalar main
// loop's loads ahead of its FFMAs; ptxas sinks a conditional block of loads behind them).
__device__ __forceinline__ float warptileLoadIf(const float* p, bool on) {
  float v;
  asm volatile("{\n\t.reg .pred q;\n\t.reg .u64 g;\n\tsetp.ne.b32 q, %2, 0;\n\tcvta.to.global.u64 g, %1;\n\t"
               "@q ld.global.nc.f32 %0, [g];\n\t}"
               : "=f"(v) : "l"(p), "r"((int)on));
  return v;
}

// One operand's k tile on its way from global to shared memory through registers. The operand
// is EXT wide (M for A, N for B) and stored either K_MAJOR, EXT rows of k (k contiguous: A for
// op(A) = N, B for op(B) = T), or as k rows of EXT (EXT contiguous: A for op(A) = T, B for
// op(B) = N); in shared memory it is k-major either way, BK rows of KS floats. Slots are float4s,
// THREADS per pass: K_MAJOR, slot i is row i / (BK/4) and k quad i % (BK/4) (stored as 4 scalars
// down the k rows: a scatter); else k row i / (EXT/4) and column quad i % (EXT/4) (stored as one
// float4). The guarded form reads `src` at 32-bit offsets of each slot's data in the next full k
// tile, advanced one tile per load; rows (K_MAJOR) or float4 columns (vector path) past EXT are
// clamped, columns past EXT on the scalar path are not loaded: they only feed results that are
// never stored. k past K is zeroed (the tail tile only).
template <int EXT, int BK, int KS, int THREADS, bool GUARDED, bool K_MAJOR>
struct StagedOperand {
  static constexpr int kVec = EXT * BK / 4;                     // float4 slots of a tile
  static constexpr int kIters = (kVec + THREADS - 1) / THREADS;
  static constexpr int kQuads = K_MAJOR ? BK / 4 : EXT / 4;   // float4 slots per stored row
  static_assert(EXT % 4 == 0 && BK % 4 == 0, "tiles are moved as float4s");

  const float* src;  // the operand (guarded), or its block's first row or column (unguarded)
  int ld, ext;       // leading dimension; M or N
  int step;          // guarded: offset from one k tile to the next
  float4 v[kIters];
  int off[kIters], last[kIters];  // guarded: offset of the next load; columns left before EXT

  __device__ static __forceinline__ bool live(int i) { return kVec % THREADS == 0 || i < kVec; }

  // Whether the guarded form may load full k tiles as float4s (the unguarded form always does):
  // src 16-byte aligned and ld % 4 == 0 and, EXT contiguous, EXT % 4 == 0 (a float4 group is
  // then wholly inside or wholly past EXT).
  __device__ static __forceinline__ bool vectorizable(const float* src, int ld, int ext) {
    return !GUARDED || ((reinterpret_cast<unsigned long long>(src) & 15) == 0 && (ld & 3) == 0 && (K_MAJOR || (ext & 3) == 0));
  }

  // base: the block's first row (A) or column (B) of EXT. vec: the guarded form takes the float4
  // path (every operand's vectorizable()), which clamps float4 columns past EXT.
  __device__ __forceinline__ StagedOperand(const float* operand, int ld_, int base, int ext_, int tid, bool vec)
      : src(operand + (GUARDED ? 0 : (K_MAJOR ? base * ld_ : base))), ld(ld_), ext(ext_), step(K_MAJOR ? BK : BK * ld_) {
    if (!GUARDED) return;
#pragma unroll
    for (int it = 0; it < kIters; ++it) {
      const int i = tid + it * THREADS;
      const int major = i / kQuads, quad = (i % kQuads) * 4;
      if (K_MAJOR) {
        off[it] = live(i) ? min(base + major, ext - 1) * ld + quad : 0;
      } else {
        const int c = base + quad;
        off[it] = live(i) ? major * ld + (vec ? min(c, ext - 4) : c) : 0;
        last[it] = ext - c;
      }
    }
  }

  // A full k tile: at k0 (unguarded), at the offsets (guarded; then advanced). vec: float4 loads
  // (always in the unguarded form); on: the guarded scalar path's load predicate.
  __device__ __forceinline__ void loadFull(int tid, int k0, bool vec, bool on) {
#pragma unroll
    for (int it = 0; it < kIters; ++it) {
      const int i = tid + it * THREADS;
      if (live(i)) {
        const int major = i / kQuads, quad = (i % kQuads) * 4;
        if (!GUARDED) {
          const float* p = K_MAJOR ? src + major * ld + k0 + quad : src + (k0 + major) * ld + quad;
          v[it] = *reinterpret_cast<const float4*>(p);
        } else {
          const float* p = src + off[it];
          if (vec) v[it] = __ldg(reinterpret_cast<const float4*>(p));
          else if (K_MAJOR) v[it] = make_float4(warptileLoadIf(p, on), warptileLoadIf(p + 1, on), warptileLoadIf(p + 2, on), warptileLoadIf(p + 3, on));
          else v[it] = make_float4(warptileLoadIf(p, on && 0 < last[it]), warptileLoadIf(p + 1, on && 1 < last[it]),
                                   warptileLoadIf(p + 2, on && 2 < last[it]), warptileLoadIf(p + 3, on && 3 < last[it]));
          off[it] += step;
        }
      }
    }
  }

  // Guarded form only: the partial k tile at k0 (k0 < K < k0 + BK) of the block at `base`.
  __device__ __forceinline__ void loadTail(int tid, int k0, int K, int base) {
#pragma unroll
    for (int it = 0; it < kIters; ++it) {
      const int i = tid + it * THREADS;
      if (live(i)) {
        const int major = i / kQuads, quad = (i % kQuads) * 4;
        float x[4];
        if (K_MAJOR) {
          const float* p = src + min(base + major, ext - 1) * ld;
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const int gk = k0 + quad + j;
            x[j] = (gk < K) ? p[min(gk, K - 1)] : 0.0f;
          }
        } else {
          const int gk = k0 + major;
          const float* p = src + min(gk, K - 1) * ld;
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const float y = p[min(base + quad + j, ext - 1)];
            x[j] = gk < K ? y : 0.0f;
          }
        }
        v[it] = make_float4(x[0], x[1], x[2], x[3]);
      }
    }
  }

  // The staged tile into shared memory at `s` (BK rows of KS floats).
  __device__ __forceinline__ void store(int tid, float* s) const {
#pragma unroll
    for (int it = 0; it < kIters; ++it) {
      const int i = tid + it * THREADS;
      if (live(i)) {
        const int major = i / kQuads, quad = (i % kQuads) * 4;
        if (K_MAJOR) {
          s[(quad + 0) * KS + major] = v[it].x;
          s[(quad + 1) * KS + major] = v[it].y;
          s[(quad + 2) * KS + major] = v[it].z;
          s[(quad + 3) * KS + major] = v[it].w;
        } else {
          *reinterpret_cast<float4*>(s + major * KS + quad) = v[it];
        }
      }
    }
  }
};

template <int BM, int BN, int BK, int WM, int WN, int WNITER, int TM, int TN, int THREADS, bool GUARDED, bool TRANS_A, bool TRANS_B>
__global__ void __launch_bounds__(THREADS)
    sgemm_warptile(int M, int N, int K, float alpha, const float* __restrict__ A0, int lda,
                   const float* __restrict__ B0, int ldb, float beta, float* __restrict__ C0, int ldc, GemmtuneBatch batch) {
  // B stored with k contiguous (op T) scatters along k into shared memory: padded rows (see warp_tile.cuh).
  using Tile = WarpTile<BM, BN, BK, WM, WN, WNITER, TM, TN, THREADS, TRANS_B>;  // its static_asserts check the tiling
  constexpr int kStage = Tile::kStage;      // floats per shared-memory buffer
  // A (EXT = M) is k-major when stored M rows of K (op N); B (EXT = N) when stored N rows of K (op T).
  using LoadA = StagedOperand<BM, BK, Tile::kSA, THREADS, GUARDED, !TRANS_A>;
  using LoadB = StagedOperand<BN, BK, Tile::kSB, THREADS, GUARDED, TRANS_B>;

  const float* A = A0;  // this block's matrices: blockIdx.z is the batch
  const float* B = B0;
  float* C = C0;
  warpTileSelectBatch(batch, A, B, C);

  extern __shared__ float4 smem4[];  // float4: 16-byte aligned base
  float* smem = reinterpret_cast<float*>(smem4);

  const int tid = threadIdx.x;
  const int rowBase = blockIdx.y * BM, colBase = blockIdx.x * BN;

  // Guarded form: float4 paths are still used where they are provably safe for both operands
  // (vectorizable()), decided once per launch (uniform, no divergence); C likewise with ldc.
  const bool aVec = LoadA::vectorizable(A, lda, M), bVec = LoadB::vectorizable(B, ldb, N);
  const bool cVec = !GUARDED || ((reinterpret_cast<unsigned long long>(C) & 15) == 0 && (ldc & 3) == 0 && (N & 3) == 0);
  const bool vec = !GUARDED || (aVec && bVec);
  LoadA a(A, lda, rowBase, M, tid, vec);
  LoadB b(B, ldb, colBase, N, tid, vec);

  auto loadFull = [&](int k0, bool vecLoads, bool on = true) {
    a.loadFull(tid, k0, vecLoads, on);
    b.loadFull(tid, k0, vecLoads, on);
  };
  auto storeTile = [&](float* stage) {
    a.store(tid, stage);
    b.store(tid, stage + BK * Tile::kSA);
  };

  float acc[Tile::kRows][Tile::kCols];
  Tile::clear(acc);
  const typename Tile::Place place = Tile::place(tid);

  // Tile order: the guarded form's k tail (if K % BK != 0) first, then the full tiles 0, BK, ...,
  // so the main loop only ever prefetches full tiles.
  const int nFull = K / BK;
  const bool hasTail = GUARDED && nFull * BK < K;
  const int nTiles = nFull + (hasTail ? 1 : 0);
  if (hasTail) {
    a.loadTail(tid, nFull * BK, K, rowBase);
    b.loadTail(tid, nFull * BK, K, colBase);
  } else if (!GUARDED || vec) {
    loadFull(0, true);
  } else {
    loadFull(0, false);
  }
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
  // float4 loop above compiles exactly as in the unguarded form), loads predicated (see
  // warptileLoadIf).
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
