// The batch argument of every kernel (the last of the single-kernel contract, before a split-K
// workspace): batch b reads A + b·strideA and B + b·strideB and writes C + b·strideC (elements),
// or arrayA[b], arrayB[b], arrayC[b] when the arrays are given. Laid out exactly as the host's
// device/LaunchArgs.hpp BatchArg (56 bytes).
#pragma once

struct GemmtuneBatch {
  long long strideA, strideB, strideC;
  const float* const* arrayA;
  const float* const* arrayB;
  float* const* arrayC;
  int count;
};

// Moves A, B and C to batch `b`'s matrices (64-bit offsets: a batch's own offsets stay 32-bit).
__device__ __forceinline__ void gemmtune_select_batch(const GemmtuneBatch& batch, int b, const float*& A,
                                                      const float*& B, float*& C) {
  if (batch.arrayA) {
    A = batch.arrayA[b], B = batch.arrayB[b], C = batch.arrayC[b];
  } else {
    A += b * batch.strideA, B += b * batch.strideB, C += b * batch.strideC;
  }
}
