// Test-only kernel template (family "fault"): a correct naive SGEMM that misbehaves on purpose,
// one way per MODE, so the worker's fault handling and verification can be tested. Never part of
// the product.
//
// | MODE | behaviour                                  | expected status                         |
// |------|--------------------------------------------|-----------------------------------------|
// | 0    | healthy                                    | ok                                      |
// | 1    | one store 4 TiB past C                     | runtime_fault:CUDA_ERROR_ILLEGAL_ADDRESS |
// | 2    | float4 store to C + 1 (4-byte aligned)     | runtime_fault:CUDA_ERROR_MISALIGNED_ADDRESS |
// | 3    | __trap()                                   | runtime_fault:CUDA_ERROR_LAUNCH_FAILED (or the driver's trap code) |
// | 4    | spins forever                              | timeout                                 |
// | 5    | drops the last K tile of 8                 | wrong_result                            |
// | 6    | NaN in one element                         | wrong_result                            |
// | 7    | writes nothing                             | wrong_result                            |
// | 8    | ignores alpha (computes with alpha = 1)    | wrong_result (random normal check, alpha 0.5) |
// | 9    | ignores beta (never reads C)               | wrong_result (beta = 2 check)           |
// | 10   | reads C even when beta == 0                | wrong_result (C holds NaN there)        |
// | 11   | also stores row M/2's last element one column further (C[row, N]) | wrong_result (padding canary; packed, it may race the next row's owner) |
// | 12   | also stores element (0, 0) one element before C | wrong_result (front guard canary) |
// | 13   | ignores the batch index (every batch computes batch 0) | wrong_result (batched checks)  |
// Modes 11 and 12 stay inside C's allocation: they are caught by the canaries, never as a fault.
// Launch: block 256 (16 x 16 as one dimension), grid (ceil(N / 16), ceil(M / 16), batch), no smem.
// Every layout and batch form is served (the reference the worker's layout and batch checks are
// tested with). Mode 13 is a fault on batched problems only: at batch 1 it is the healthy kernel.
#include "batch.cuh"

template <int MODE, bool GUARDED, bool TRANS_A, bool TRANS_B>
__global__ void __launch_bounds__(256)
    sgemm_fault(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb, float beta,
                float* C, int ldc, GemmtuneBatch batch) {
  gemmtune_select_batch(batch, MODE == 13 ? 0 : blockIdx.z, A, B, C);
  const bool leader = threadIdx.x == 0 && blockIdx.x == 0 && blockIdx.y == 0;
  if (MODE == 1 && leader) C[1LL << 40] = 1.0f;
  if (MODE == 2 && leader) *reinterpret_cast<float4*>(C + 1) = make_float4(1.0f, 2.0f, 3.0f, 4.0f);
  if (MODE == 3 && leader) __trap();
  if (MODE == 4)
    while (*reinterpret_cast<const volatile float*>(A) != 12345.5f) {
    }
  if (MODE == 7) return;

  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (GUARDED && (row >= M || col >= N)) return;
  const int kEnd = MODE == 5 ? (K > 8 ? (K - 1) / 8 * 8 : 0) : K;
  float acc = 0.0f;
  for (int k = 0; k < kEnd; ++k)
    acc += (TRANS_A ? A[(long long)k * lda + row] : A[(long long)row * lda + k]) *
           (TRANS_B ? B[(long long)col * ldb + k] : B[(long long)k * ldb + col]);
  float* c = C + (long long)row * ldc + col;
  const float a = MODE == 8 ? 1.0f : alpha;
  float out;
  if (MODE == 9)
    out = a * acc;
  else if (MODE == 10 || beta != 0.0f)
    out = a * acc + beta * *c;
  else
    out = a * acc;
  if (MODE == 6 && row == M / 2 && col == N / 3) out = __int_as_float(0x7fc00000);
  *c = out;
  if (MODE == 11 && row == M / 2 && col == N - 1) c[1] = out;
  if (MODE == 12 && row == 0 && col == 0) C[-1] = out;
}
