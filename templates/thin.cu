// gemmtune kernel template: small C tiles with K split across blocks (family "thin").
//
// For the shapes large tiles leave the GPU idle on: M or N small (down to a GEMV, M = 1 or
// N = 1), or few C tiles over a long K. Each block computes a BM x BN tile of C (8 to 128 on a
// side) over one slice of K; gridDim.z is the number of slices. With one slice the block writes C
// itself. With several, each block stores its partial tile in the workspace and counts itself in
// its tile's counter; the last block of a tile to arrive adds the slices' partials in slice order
// (so the same inputs give the same bits on every run, whichever block comes last), applies alpha
// and beta once, and sets the counter back to zero for the next launch.
//
// A sits row-major in shared memory (rows of BK + 4 floats): the inner loop reads four k steps of
// one row as a float4, and thread rows are interleaved (thread row ty owns rows ty, ty + BM/TM,
// ...), so the rows a warp reads at once are adjacent and fall in different banks. B sits
// row-major (rows of BN floats), read as float4 where TN is a multiple of 4. Global tiles are
// staged in registers while the block computes on the other of two shared-memory buffers. The
// unguarded form loads A and B as float4 and stores C as float4 where TN allows.
//
// | parameter | meaning                                         | constraints                      |
// |-----------|-------------------------------------------------|----------------------------------|
// | BM, BN    | C tile per block (rows, columns)                | TM | BM, TN | BN, 4 | BN         |
// | BK        | depth of the A and B tiles in shared memory     | multiple of 4                    |
// | TM, TN    | results per thread (rows, columns)              | TN 1, 2 or a multiple of 4       |
// | GUARDED   | true: any shape and alignment; false: below     | -                                |
//
// Threads per block: (BM / TM) * (BN / TN), whole warps. Grid: (ceil(M / BM), ceil(N / BN),
// slices), blockIdx.x over M. Dynamic shared memory: 2 * (BM * (BK + 4) + BK * BN) * 4 + 16 bytes.
// Workspace (slices > 1): a counter per C tile (gridDim.x * gridDim.y unsigned ints, rounded up
// to 64), zero before the launch and zero after it, then slices * tiles * BM * BN floats of
// partial sums (below 2^31 floats: 32-bit offsets); unused with one slice (may be null).
// Preconditions, both forms: M, N, K >= 1; lda >= K, ldb >= N, ldc >= N; 4-byte aligned A, B, C;
// (M + BM) * lda, (K + BK) * ldb and (M + BM) * ldc below 2^31. GUARDED == false additionally:
// BM | M, BN | N, BK | K; A, B, C 16-byte aligned; lda, ldb, ldc multiples of 4.
// Contract shared by every gemmtune template: row-major C = alpha * A * B + beta * C with
// A M x K (lda), B K x N (ldb), C M x N (ldc); beta == 0 never reads C.
// Self-contained (no includes) for NVRTC.

template <int BM, int BN, int BK, int TM, int TN, bool GUARDED>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
    sgemm_thin(int M, int N, int K, float alpha, const float* __restrict__ A, int lda, const float* __restrict__ B,
               int ldb, float beta, float* __restrict__ C, int ldc, float* __restrict__ workspace) {
  static_assert(BM % TM == 0 && BN % TN == 0, "TM must divide BM and TN must divide BN");
  static_assert(TN == 1 || TN == 2 || TN % 4 == 0, "TN must be 1, 2 or a multiple of 4 (B fragments are read as float2/float4)");
  static_assert(BK >= 4 && BK % 4 == 0, "BK must be a positive multiple of 4 (A is read four k steps at a time)");
  static_assert(BN % 4 == 0, "BN must be a multiple of 4 (B is loaded as float4 along n)");
  constexpr int kThreads = (BM / TM) * (BN / TN);
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "(BM/TM)*(BN/TN) threads: whole warps, at most 1024");
  constexpr int kRowStep = BM / TM;     // thread rows: thread row ty owns rows ty + i * kRowStep
  constexpr int kSA = BK + 4;           // row stride of A in shared memory (floats), float4-aligned
  constexpr int kStage = BM * kSA + BK * BN;  // floats per shared-memory buffer
  // Staging: the unguarded form moves float4 slots, the guarded form single elements.
  constexpr int kVec = GUARDED ? 1 : 4;
  constexpr int kASlots = BM * BK / kVec, kBSlots = BK * BN / kVec;
  constexpr int kAIters = (kASlots + kThreads - 1) / kThreads, kBIters = (kBSlots + kThreads - 1) / kThreads;

  extern __shared__ float4 smem4[];
  float* const smem = reinterpret_cast<float*>(smem4);
  unsigned* const lastFlag = reinterpret_cast<unsigned*>(smem + 2 * kStage);

  const int tid = threadIdx.x;
  const int ty = tid / (BN / TN), tx = tid % (BN / TN);
  const int rowBase = blockIdx.x * BM, colBase = blockIdx.y * BN;

  // This block's k tiles: the slices share ceil(K / BK) tiles in equal runs (the last ones may
  // be shorter or empty: an empty slice adds zeros).
  const int kTiles = (K + BK - 1) / BK;
  const int perSlice = (kTiles + gridDim.z - 1) / gridDim.z;
  const int tBegin = blockIdx.z * perSlice;
  const int tCount = max(0, min(kTiles, tBegin + perSlice) - tBegin);

  float4 stageA[GUARDED ? 1 : kAIters], stageB[GUARDED ? 1 : kBIters];
  float scalarA[GUARDED ? kAIters : 1], scalarB[GUARDED ? kBIters : 1];

  auto load = [&](int tile) {
    const int k0 = tile * BK;
#pragma unroll
    for (int it = 0; it < kAIters; ++it) {
      const int s = tid + it * kThreads;
      if (kASlots % kThreads == 0 || s < kASlots) {
        if constexpr (!GUARDED) {
          const int r = s / (BK / 4), kq = (s % (BK / 4)) * 4;
          stageA[it] = *reinterpret_cast<const float4*>(A + (rowBase + r) * lda + k0 + kq);
        } else {
          const int r = s / BK, kk = s % BK;
          // Offsets only of rows that exist: (M + BM) * lda may not fit in 32 bits.
          const bool ok = rowBase + r < M && k0 + kk < K;
          scalarA[it] = ok ? A[(rowBase + r) * lda + k0 + kk] : 0.0f;
        }
      }
    }
#pragma unroll
    for (int it = 0; it < kBIters; ++it) {
      const int s = tid + it * kThreads;
      if (kBSlots % kThreads == 0 || s < kBSlots) {
        if constexpr (!GUARDED) {
          const int kr = s / (BN / 4), cq = (s % (BN / 4)) * 4;
          stageB[it] = *reinterpret_cast<const float4*>(B + (k0 + kr) * ldb + colBase + cq);
        } else {
          const int kr = s / BN, c = s % BN;
          const bool ok = k0 + kr < K && colBase + c < N;
          scalarB[it] = ok ? B[(k0 + kr) * ldb + colBase + c] : 0.0f;
        }
      }
    }
  };
  auto store = [&](float* buf) {
    float* As = buf;
    float* Bs = buf + BM * kSA;
#pragma unroll
    for (int it = 0; it < kAIters; ++it) {
      const int s = tid + it * kThreads;
      if (kASlots % kThreads == 0 || s < kASlots) {
        if constexpr (!GUARDED)
          *reinterpret_cast<float4*>(As + (s / (BK / 4)) * kSA + (s % (BK / 4)) * 4) = stageA[it];
        else
          As[(s / BK) * kSA + s % BK] = scalarA[it];
      }
    }
#pragma unroll
    for (int it = 0; it < kBIters; ++it) {
      const int s = tid + it * kThreads;
      if (kBSlots % kThreads == 0 || s < kBSlots) {
        if constexpr (!GUARDED)
          *reinterpret_cast<float4*>(Bs + s * 4) = stageB[it];
        else
          Bs[s] = scalarB[it];
      }
    }
  };

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  if (tCount > 0) {
    load(tBegin);
    store(smem);
    __syncthreads();
    for (int t = 0; t < tCount; ++t) {
      float* const buf = smem + (t & 1) * kStage;
      if (t + 1 < tCount) load(tBegin + t + 1);  // in flight while this tile is multiplied
      const float* As = buf;
      const float* Bs = buf + BM * kSA;
#pragma unroll
      for (int k = 0; k < BK; k += 4) {
        float4 a[TM];
#pragma unroll
        for (int i = 0; i < TM; ++i) a[i] = *reinterpret_cast<const float4*>(As + (ty + i * kRowStep) * kSA + k);
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          float b[TN];
          const float* bRow = Bs + (k + q) * BN + tx * TN;
          if constexpr (TN % 4 == 0) {
#pragma unroll
            for (int j = 0; j < TN; j += 4) {
              const float4 v = *reinterpret_cast<const float4*>(bRow + j);
              b[j] = v.x, b[j + 1] = v.y, b[j + 2] = v.z, b[j + 3] = v.w;
            }
          } else if constexpr (TN == 2) {
            const float2 v = *reinterpret_cast<const float2*>(bRow);
            b[0] = v.x, b[1] = v.y;
          } else {
            b[0] = bRow[0];
          }
#pragma unroll
          for (int i = 0; i < TM; ++i) {
            const float av = q == 0 ? a[i].x : q == 1 ? a[i].y : q == 2 ? a[i].z : a[i].w;
#pragma unroll
            for (int j = 0; j < TN; ++j) acc[i][j] += av * b[j];
          }
        }
      }
      if (t + 1 < tCount) store(smem + ((t + 1) & 1) * kStage);
      __syncthreads();
    }
  }

  // C[row][col] = alpha * sum + beta * C[row][col], for this thread's (i, j) where it exists.
  auto writeC = [&](int i, int j, float sum) {
    const int row = rowBase + ty + i * kRowStep, col = colBase + tx * TN + j;
    if (GUARDED && (row >= M || col >= N)) return;
    float* c = C + row * ldc + col;
    *c = beta == 0.0f ? alpha * sum : alpha * sum + beta * *c;
  };

  if (gridDim.z == 1) {
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      if constexpr (!GUARDED && TN % 4 == 0) {
        float* c = C + (rowBase + ty + i * kRowStep) * ldc + colBase + tx * TN;
#pragma unroll
        for (int j = 0; j < TN; j += 4) {
          float4 v = make_float4(alpha * acc[i][j], alpha * acc[i][j + 1], alpha * acc[i][j + 2], alpha * acc[i][j + 3]);
          if (beta != 0.0f) {
            const float4 old = *reinterpret_cast<const float4*>(c + j);
            v.x += beta * old.x, v.y += beta * old.y, v.z += beta * old.z, v.w += beta * old.w;
          }
          *reinterpret_cast<float4*>(c + j) = v;
        }
      } else {
#pragma unroll
        for (int j = 0; j < TN; ++j) writeC(i, j, acc[i][j]);
      }
    }
    return;
  }

  // Split K: partial tile out, count in; the last block of this tile reduces in slice order.
  const int tiles = gridDim.x * gridDim.y, tile = blockIdx.y * gridDim.x + blockIdx.x;
  unsigned* const counters = reinterpret_cast<unsigned*>(workspace);
  const float* const partials = workspace + (tiles + 63) / 64 * 64;
  auto partialAt = [&](int slice, int i, int j) {
    return (slice * tiles + tile) * (BM * BN) + (ty + i * kRowStep) * BN + tx * TN + j;
  };
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) workspace[(tiles + 63) / 64 * 64 + partialAt(blockIdx.z, i, j)] = acc[i][j];
  __threadfence();  // the partials are visible device-wide before this block is counted
  __syncthreads();
  if (tid == 0) *lastFlag = atomicAdd(counters + tile, 1u) == gridDim.z - 1 ? 1u : 0u;
  __syncthreads();
  if (*lastFlag == 0) return;
  __threadfence();  // every other slice counted itself after its fence: its partials are visible
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      float sum = 0.0f;
      for (int s = 0; s < static_cast<int>(gridDim.z); ++s)
        sum += s == static_cast<int>(blockIdx.z) ? acc[i][j] : __ldcg(partials + partialAt(s, i, j));
      writeC(i, j, sum);
    }
  if (tid == 0) counters[tile] = 0;  // zero again for the next launch in this stream
}
