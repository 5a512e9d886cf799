// gemmtune kernel template: 1D-blocktiled SGEMM (family "blocktile1d").
//
// Each block computes a BM x BN tile of C; each thread computes TM results of one column, so one
// value of B read from shared memory feeds TM multiply-adds. A and B tiles of depth BK are loaded
// cooperatively in strided steps, so any BM, BN, BK, TM satisfying the constraints below works
// (the loader does not need BM*BK or BN*BK to equal the thread count).
//
// | parameter | meaning                                         | constraints                      |
// |-----------|-------------------------------------------------|----------------------------------|
// | BM        | rows of the C tile per block                    | >= 1, multiple of TM             |
// | BN        | columns of the C tile per block                 | >= 1                             |
// | BK        | depth of the A and B tiles in shared memory     | >= 1                             |
// | TM        | results per thread (TM rows of one column)      | >= 1, divides BM                 |
// | GUARDED   | true: any M, N, K >= 1; false: BM | M, BN | N, BK | K | -                        |
//
// Threads per block: BM * BN / TM (<= 1024). Dynamic shared memory: (BM + BN) * BK * 4 bytes
// (above 48 KiB the launcher opts in with CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES).
// Contract shared by every gemmtune template: row-major C = alpha * A * B + beta * C with
// A M x K (lda), B K x N (ldb), C M x N (ldc); beta == 0 never reads C.
// Launch: grid (ceil(N / BN), ceil(M / BM)). Self-contained (no includes) for NVRTC.

template <int BM, int BN, int BK, int TM, bool GUARDED>
__global__ void __launch_bounds__(BM / TM * BN)
    sgemm_blocktile_1d(int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
                       const float* __restrict__ B, int ldb, float beta, float* __restrict__ C, int ldc) {
  static_assert(BM >= 1 && BN >= 1 && BK >= 1 && TM >= 1, "BM, BN, BK and TM must be at least 1");
  static_assert(BM % TM == 0, "TM must divide BM: each thread owns TM whole rows of one column");
  static_assert(BM / TM * BN <= 1024, "BM*BN/TM threads exceed CUDA's 1024 per block");
  constexpr int kThreads = BM / TM * BN;

  extern __shared__ float smem[];
  float* As = smem;            // BM x BK, row-major
  float* Bs = smem + BM * BK;  // BK x BN, row-major

  const int tcol = threadIdx.x % BN;  // column of C within the tile
  const int trow = threadIdx.x / BN;  // owns tile rows trow*TM .. trow*TM + TM - 1
  const int rowBase = blockIdx.y * BM;
  const int colBase = blockIdx.x * BN;

  float acc[TM];
#pragma unroll
  for (int m = 0; m < TM; ++m) acc[m] = 0.0f;

  for (int k0 = 0; k0 < K; k0 += BK) {
    // Strided cooperative loads; consecutive threads read consecutive addresses of a row.
    for (int i = threadIdx.x; i < BM * BK; i += kThreads) {
      const int r = i / BK, k = i % BK;
      const int gr = rowBase + r, gk = k0 + k;
      As[i] = (!GUARDED || (gr < M && gk < K)) ? A[(long long)gr * lda + gk] : 0.0f;
    }
    for (int i = threadIdx.x; i < BK * BN; i += kThreads) {
      const int k = i / BN, c = i % BN;
      const int gk = k0 + k, gc = colBase + c;
      Bs[i] = (!GUARDED || (gk < K && gc < N)) ? B[(long long)gk * ldb + gc] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      const float b = Bs[k * BN + tcol];
#pragma unroll
      for (int m = 0; m < TM; ++m) acc[m] += As[(trow * TM + m) * BK + k] * b;
    }
    __syncthreads();
  }

  const int col = colBase + tcol;
#pragma unroll
  for (int m = 0; m < TM; ++m) {
    const int row = rowBase + trow * TM + m;
    if (!GUARDED || (row < M && col < N)) {
      float* c = C + (long long)row * ldc + col;
      *c = (beta == 0.0f) ? alpha * acc[m] : alpha * acc[m] + beta * *c;
    }
  }
}
