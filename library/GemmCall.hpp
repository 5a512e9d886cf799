// GemmCall: one sgemm() call of any entry point — layout, sizes, scalars, operands, batch — and
// the one place a column-major call becomes the row-major problem the kernels compute.
#pragma once

#include <string>

#include "GemmShape.hpp"
#include "gemmtune/Library.hpp"

namespace gemmtune::library {

// The layout of op(A), op(B) in the row-major view.
inline Layout layoutOf(Op opA, Op opB) { return {opA == Op::T, opB == Op::T}; }

struct GemmCall {
  Order order = Order::row_major;
  Op opA = Op::N, opB = Op::N;
  int m = 0, n = 0, k = 0;
  float alpha = 1.0f;
  const float* a = nullptr;
  int lda = 0;
  const float* b = nullptr;
  int ldb = 0;
  float beta = 0.0f;
  float* c = nullptr;
  int ldc = 0;
  long long batch = 1;
  long long strideA = 0, strideB = 0, strideC = 0;  // floats; unused with pointer arrays
  const float* const* arrayA = nullptr;             // device arrays of per-batch pointers, or all null
  const float* const* arrayB = nullptr;
  float* const* arrayC = nullptr;

  bool pointerArrays() const { return arrayA || arrayB || arrayC; }
  Layout layout() const { return layoutOf(opA, opB); }
};

// Why `call` is not a valid call, naming the argument as the caller wrote it (ld, strides and
// shapes in the call's own order); empty when it is valid.
std::string invalidArgument(const GemmCall& call);

// The same product in row-major form: a column-major X stored r x c with leading dimension ld is
// the row-major Xᵀ with the same ld, so C = op(A)·op(B) column-major is Cᵀ = op(B)ᵀ·op(A)ᵀ
// row-major — M and N, A and B (pointers, ld, strides, arrays) trade places, the ops stay.
GemmCall asRowMajor(const GemmCall& call);

}  // namespace gemmtune::library
