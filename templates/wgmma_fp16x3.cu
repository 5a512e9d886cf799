// gemmtune kernel template: FP32 GEMM at FP32 accuracy on Hopper's FP16 wgmma (family
// "wgmmafp16x3", precision class faithful, sm_90a). The passes around the GEMM are fp16x3's
// (templates/fp16x3_passes.cuh: per operand maxima, scales and split into FP16 parts; unscale);
// this file is the GEMM D = A'·B' over K' = 3·Kp on wgmma.mma_async, which runs FP16 at twice
// mma.sync's rate.
//
// Why not one long wgmma accumulation: Hopper's FP16 tensor cores accumulate with a bias, the
// error growing with the K one accumulator sees (measured on an H100: whole-K accumulation gave
// 1.7–9× cuBLAS SGEMM's error). Each chain of wgmmas therefore starts from zero in a temporary set
// of registers (64·RESTART of K) and is then added, FP32 round to nearest, into the accumulators:
// while one chain runs on the tensor cores, the previous chain's sum is added (two temporary sets).
//
// Block: two warpgroups (256 threads), a BM × BN tile of D; warpgroup g owns rows g·BM/2 ..,
// in sub-tiles of 64 × SN (one wgmma m64nSNk16 each, four per 64 of K). Shared memory: STAGES
// stages of the block's A' and B' rows × 64 k, 128-byte swizzled (the layout wgmma's descriptors
// name), filled by cp.async STAGES − 2 tiles ahead (a stage is rewritten only after both
// warpgroups' chains on it have completed). Rows past M or Np are read as zeros and never stored.
// Tiles in groups of GROUP tile rows (L2 reuse), batches in grid z.
#include "fp16x3_passes.cuh"

// D (+)= A·B for one 64 × N × 16 step, A and B in shared memory (descriptors), D in this thread's
// N/2 registers; SCALE_D 0 starts from zero. One wrapper per N: inline asm names every accumulator
// register in its operand list, so N = 64 and N = 128 are two lists, not one template.
template <int SCALE_D>
__device__ __forceinline__ void gemmtune_wgmma_n64(float (&d)[32], unsigned long long a, unsigned long long b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
      "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
      "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, "
      "%32, %33, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(a), "l"(b), "n"(SCALE_D));
}

template <int SCALE_D>
__device__ __forceinline__ void gemmtune_wgmma_n128(float (&d)[64], unsigned long long a, unsigned long long b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 "
      "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
      "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"
      "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"
      "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, "
      "%64, %65, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(a), "l"(b), "n"(SCALE_D));
}

// Row r's 16-byte chunk c (8 halves of k) in a tile of 128-byte rows: the 128-byte swizzle, the
// chunk index XORed with r mod 8 (tiles start 1024-byte aligned).
__device__ __forceinline__ unsigned gemmtune_wgmma_swizzled(int row, int chunk) {
  return static_cast<unsigned>(row * 128 + ((chunk ^ (row & 7)) << 4));
}

// A K-major operand's shared memory descriptor: start address, leading byte offset 1 (unused when
// swizzled), 1024 bytes between groups of eight rows, 128-byte swizzle.
__device__ __forceinline__ unsigned long long gemmtune_wgmma_desc(unsigned smem) {
  return static_cast<unsigned long long>((smem & 0x3FFFF) >> 4) | (1ull << 16) | (64ull << 32) | (1ull << 62);
}

// Keeps the compiler from moving reads or writes of `t` across a wgmma fence or wait.
template <int N>
__device__ __forceinline__ void gemmtune_wgmma_hold(float (&t)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(t[i])::"memory");
}

// A warpgroup's sub-tiles. The plan's shared memory (generator/families/WgmmaFp16x3.cpp) is
// STAGES · gemmtune_wgmma_operands::kStageBytes + 1024 (room to align the stages to 1024).
template <int BM, int BN, int SN, int STAGES>
struct gemmtune_wgmma_tiles {
  static constexpr int kWM = BM / 2, kSubs = (kWM / 64) * (BN / SN);
  static_assert(kWM % 64 == 0 && BN % SN == 0 && (SN == 64 || SN == 128), "sub-tiles of 64 x 64 or 64 x 128");
  static_assert(kSubs == 1 || kSubs % 2 == 0, "the temporary sets alternate by sub-tile");
  static_assert(STAGES >= 3, "cp.async runs STAGES - 2 tiles ahead");
};

// Copies k tile `kt` of the block's A' rows (rowsA of them exist) and B' rows into the stage at
// shared address `stage`: 16 bytes per copy, rows past the operand zero-filled.
template <int BM, int BN>
__device__ __forceinline__ void gemmtune_wgmma_load(unsigned stage, const gemmtune_half* a, int rowsA, const gemmtune_half* b,
                                                    int rowsB, int ldk, int kt) {
  constexpr int kCopiesA = BM * 8 / 256, kCopies = (BM + BN) * 8 / 256;
#pragma unroll
  for (int it = 0; it < kCopies; ++it) {
    const int i = it * 256 + static_cast<int>(threadIdx.x), row = i >> 3, chunk = i & 7;
    const bool isA = it < kCopiesA;
    const int r = isA ? row : row - BM;
    const bool exists = r < (isA ? rowsA : rowsB);
    const gemmtune_half* src = (isA ? a : b) + static_cast<long long>(exists ? r : 0) * ldk + kt * 64 + chunk * 8;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(stage + gemmtune_wgmma_swizzled(row, chunk)),
                 "l"(src), "r"(exists ? 16 : 0));
  }
}

// One chain: sub-tile `sub`'s four wgmmas over one k tile into `t` (the first from zero unless
// CONTINUE), committed as one group.
template <int BM, int BN, int SN, bool CONTINUE>
__device__ __forceinline__ void gemmtune_wgmma_chain(float (&t)[SN / 2], unsigned stage, int warpgroup, int sub) {
  const int subM = sub / (BN / SN), subN = sub % (BN / SN);
  const unsigned a = stage + (warpgroup * (BM / 2) + subM * 64) * 128, b = stage + (BM + subN * SN) * 128;
  gemmtune_wgmma_hold(t);
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const unsigned long long da = gemmtune_wgmma_desc(a + 32 * k), db = gemmtune_wgmma_desc(b + 32 * k);
    if constexpr (SN == 64) {
      if (k == 0 && !CONTINUE) gemmtune_wgmma_n64<0>(t, da, db); else gemmtune_wgmma_n64<1>(t, da, db);
    } else {
      if (k == 0 && !CONTINUE) gemmtune_wgmma_n128<0>(t, da, db); else gemmtune_wgmma_n128<1>(t, da, db);
    }
  }
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  gemmtune_wgmma_hold(t);
}

// Waits until at most PENDING of this warpgroup's chains are still running.
template <int PENDING>
__device__ __forceinline__ void gemmtune_wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(PENDING) : "memory");
}

// acc += t, once t's chain has completed.
template <int N>
__device__ __forceinline__ void gemmtune_wgmma_add(float (&acc)[N], float (&t)[N]) {
  gemmtune_wgmma_hold(t);
#pragma unroll
  for (int i = 0; i < N; ++i) acc[i] += t[i];
}

// Where the block's k tiles come from and go: A' and B' rows of its tile, stages in shared memory.
template <int BM, int BN, int STAGES>
struct gemmtune_wgmma_operands {
  const gemmtune_half *a, *b;
  int rowsA, rowsB, ldk;
  unsigned smem;  // 1024-byte aligned shared address of stage 0
  static constexpr int kStageBytes = (BM + BN) * 64 * 2;  // rows × 64 k of FP16
  __device__ unsigned stage(int kt) const { return smem + (kt % STAGES) * kStageBytes; }
  __device__ void load(int kt) const { gemmtune_wgmma_load<BM, BN>(stage(kt), a, rowsA, b, rowsB, ldk, kt); }
};

// Block id → (tile row, tile column): GROUP tile rows at a time, down each column of the group.
// False for a grid the plan did not make (the block computes nothing: verification then fails).
template <int GROUP>
__device__ __forceinline__ bool gemmtune_wgmma_tile(long long tilesM, long long tilesN, int& tm, int& tn) {
  if (static_cast<long long>(gridDim.x) != tilesM * tilesN) return false;
  const long long id = blockIdx.x, perGroup = GROUP * tilesN, firstM = id / perGroup * GROUP;
  const long long rows = min(static_cast<long long>(GROUP), tilesM - firstM), inGroup = id % perGroup;
  tm = static_cast<int>(firstM + inGroup % rows), tn = static_cast<int>(inGroup / rows);
  return true;
}

// acc[sub] += the temporary set PAR, once its chain has completed.
template <int PAR, int SN, int SUBS>
__device__ __forceinline__ void gemmtune_wgmma_add_set(float (&acc)[SUBS][SN / 2], float (&t0)[SN / 2],
                                                       float (&t1)[SN / 2], int sub) {
  if constexpr (PAR) gemmtune_wgmma_add(acc[sub], t1);
  else gemmtune_wgmma_add(acc[sub], t0);
}

// k tile kt, the U-th of UNROLL in a row (then the next, through templates: which temporary set a
// chain uses must be known when compiling, or the sets would live in local memory). A run holds an
// even number of chains: with one sub-tile per warpgroup, two chains of RESTART k tiles each;
// with several, one chain per sub-tile and k tile. Chain j runs into set j mod 2; once chain j + 1
// is issued, chain j's sum is added into its sub-tile's accumulators while j + 1 runs. Every run
// ends with nothing in flight (ptxas serializes every wgmma when a loop carries one in flight).
template <int BM, int BN, int SN, int STAGES, int RESTART, int U, int UNROLL, int SUBS>
__device__ __forceinline__ void gemmtune_wgmma_ktile(float (&acc)[SUBS][SN / 2], float (&t0)[SN / 2],
                                                     float (&t1)[SN / 2],
                                                     const gemmtune_wgmma_operands<BM, BN, STAGES>& op, int kt,
                                                     int kTiles, int warpgroup) {
  constexpr int kChain = SUBS == 1 ? U / RESTART : 0;  // with one sub-tile: which chain of the run
  if (kt >= kTiles) {  // K ended inside the run (one sub-tile only): add the chain that was running
    gemmtune_wgmma_wait<0>();
    gemmtune_wgmma_add_set<((U - 1) / RESTART) & 1, SN, SUBS>(acc, t0, t1, 0);
    return;
  }
  // Tile kt has landed (this thread's copies), is visible to wgmma's async proxy, and (barrier)
  // every warpgroup's chains on the stage the next load rewrites have completed.
  asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 3) : "memory");
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
#pragma unroll
  for (int s = 0; s < SUBS; ++s) {
    const int set = SUBS == 1 ? kChain & 1 : s & 1;
    constexpr bool kContinue = SUBS == 1 && U % RESTART != 0;
    if (set) gemmtune_wgmma_chain<BM, BN, SN, kContinue>(t1, op.stage(kt), warpgroup, s);
    else gemmtune_wgmma_chain<BM, BN, SN, kContinue>(t0, op.stage(kt), warpgroup, s);
    if (s == 0) {
      if (kt + STAGES - 2 < kTiles) op.load(kt + STAGES - 2);
      asm volatile("cp.async.commit_group;\n" ::: "memory");
    }
    if (SUBS == 1 || s > 0) gemmtune_wgmma_wait<1>();  // every earlier group has completed
    if (SUBS > 1 && s > 0) {
      if (set) gemmtune_wgmma_add(acc[s - 1], t0); else gemmtune_wgmma_add(acc[s - 1], t1);
    }
  }
  if constexpr (SUBS == 1 && U % RESTART == 0 && U > 0) gemmtune_wgmma_add_set<0, SN, SUBS>(acc, t0, t1, 0);
  if constexpr (U + 1 < UNROLL) {
    gemmtune_wgmma_ktile<BM, BN, SN, STAGES, RESTART, U + 1, UNROLL, SUBS>(acc, t0, t1, op, kt + 1, kTiles, warpgroup);
  } else {
    gemmtune_wgmma_wait<0>();
    gemmtune_wgmma_add_set<1, SN, SUBS>(acc, t0, t1, SUBS - 1);
  }
}

// D's rows and columns of this thread's accumulators (wgmma's layout: warp w of the warpgroup
// holds rows 16w .. 16w + 15 of a sub-tile, lane l rows l/4 and l/4 + 8, two columns per 8).
template <int BM, int BN, int SN, int SUBS>
__device__ __forceinline__ void gemmtune_wgmma_store(const float (&acc)[SUBS][SN / 2], float* d, int M, int Np, int tm,
                                                     int tn, int warpgroup) {
  const int warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
#pragma unroll
  for (int s = 0; s < SUBS; ++s) {
    const int row = tm * BM + warpgroup * (BM / 2) + (s / (BN / SN)) * 64 + warp * 16 + lane / 4;
    const int col0 = tn * BN + (s % (BN / SN)) * SN + 2 * (lane % 4);
#pragma unroll
    for (int j = 0; j < SN / 8; ++j) {
      const int col = col0 + 8 * j;
      if (col >= Np) continue;
      if (row < M)
        *reinterpret_cast<float2*>(d + static_cast<long long>(row) * Np + col) = make_float2(acc[s][4 * j], acc[s][4 * j + 1]);
      if (row + 8 < M)
        *reinterpret_cast<float2*>(d + static_cast<long long>(row + 8) * Np + col) =
            make_float2(acc[s][4 * j + 2], acc[s][4 * j + 3]);
    }
  }
}

// The GEMM D = A'·B' (M × Np × 3Kp; A' and B' K-contiguous rows, D row-major with ld Np).
template <int BM, int BN, int SN, int STAGES, int RESTART, int GROUP, bool GUARDED, bool TRANS_A, bool TRANS_B>
__global__ void __launch_bounds__(256, 1) sgemm_wgmma_fp16x3(int M, int N, int K, int* workspace) {
  using T = gemmtune_wgmma_tiles<BM, BN, SN, STAGES>;
  using L = gemmtune_fp16x3_layout;
  static_assert(RESTART == 1 || T::kSubs == 1, "a chain spans k tiles only where a warpgroup has one sub-tile");
  const L w(M, N, K, blockIdx.z);
  int tm, tn;
  if (!gemmtune_wgmma_tile<GROUP>((M + BM - 1) / BM, (w.Np + BN - 1) / BN, tm, tn)) return;
  extern __shared__ __align__(1024) unsigned char gemmtune_wgmma_smem[];
  gemmtune_wgmma_operands<BM, BN, STAGES> op;
  op.ldk = 3 * w.Kp, op.rowsA = M - tm * BM, op.rowsB = w.Np - tn * BN;
  op.a = L::at<gemmtune_half>(workspace, w.partsA()) + static_cast<long long>(tm) * BM * op.ldk;
  op.b = L::at<gemmtune_half>(workspace, w.partsB()) + static_cast<long long>(tn) * BN * op.ldk;
  op.smem = (static_cast<unsigned>(__cvta_generic_to_shared(gemmtune_wgmma_smem)) + 1023) & ~1023u;
  const int kTiles = op.ldk / 64, warpgroup = threadIdx.x / 128;
  float acc[T::kSubs][SN / 2], t0[SN / 2], t1[SN / 2];
#pragma unroll
  for (int s = 0; s < T::kSubs; ++s)
#pragma unroll
    for (int i = 0; i < SN / 2; ++i) acc[s][i] = 0.0f;
  for (int s = 0; s < STAGES - 2; ++s) {
    if (s < kTiles) op.load(s);
    asm volatile("cp.async.commit_group;\n" ::: "memory");
  }
  constexpr int kUnroll = T::kSubs == 1 ? 2 * RESTART : 1;  // runs of an even number of chains
  for (int k0 = 0; k0 < kTiles; k0 += kUnroll)
    gemmtune_wgmma_ktile<BM, BN, SN, STAGES, RESTART, 0, kUnroll, T::kSubs>(acc, t0, t1, op, k0, kTiles, warpgroup);
  gemmtune_wgmma_store<BM, BN, SN, T::kSubs>(acc, L::at<float>(workspace, w.product()), M, w.Np, tm, tn, warpgroup);
}
