// GemmProblem: what one SGEMM call is, as every layer sees it — its shape (sizes, layout, batch),
// leading dimensions, batch strides or pointer arrays, how the base pointers are aligned and
// whether beta is zero. Launch plans, the worker, the library and the lookup all describe a call
// with it; it sits below the device layer and the generator so that both can speak of problems
// without depending on each other. Column-major callers map onto it in one place
// (library/GemmCall.hpp, asRowMajor).
#pragma once

#include <cstdint>
#include <string>

#include "GemmShape.hpp"

namespace gemmtune {

// Row-major C (M×N, ldc) = alpha·op(A)·op(B) + beta·C, `batch` times: batch b reads A + b·strideA,
// B + b·strideB and writes C + b·strideC (elements), or, with pointer arrays, the b-th pointer of
// each array (the arrays live in device memory; the strides are then unused).
struct GemmProblem {
  long long m = 0, n = 0, k = 0;
  Layout layout{};
  long long lda = 0, ldb = 0, ldc = 0;
  long long batch = 1;
  long long strideA = 0, strideB = 0, strideC = 0;
  bool pointerArrays = false;
  // Bytes: the largest power of two (≤ 16) dividing every matrix's address (for strided batches
  // the base's and the stride's; pointer arrays are not read on the host, so 4).
  int alignA = 16, alignB = 16, alignC = 16;
  bool betaZero = true;

  // Densely packed (lda, ldb, ldc the stored row lengths, strides one matrix each), base
  // pointers 16-byte aligned (as cuMemAlloc gives).
  static GemmProblem packed(const GemmShape& shape);
  static GemmProblem packed(long long m, long long n, long long k) { return packed(GemmShape{m, n, k}); }
  static int alignmentOf(std::uintptr_t address);

  GemmShape shape() const { return {m, n, k, layout, batch}; }
  // Rows and row length of A and B as stored (op T stores the transpose).
  long long rowsA() const { return layout.transA ? k : m; }
  long long colsA() const { return layout.transA ? m : k; }
  long long rowsB() const { return layout.transB ? n : k; }
  long long colsB() const { return layout.transB ? k : n; }
  std::string text() const;  // "1000x1000x1000 tn lda 1003 ldb 1000 ldc 1000 A+4B batch 8"
};

// Why no kernel can run `problem` (a dimension below 1, a leading dimension below its stored row
// length, a batch below 1, a negative stride, batches whose C overlap), or empty: the checks every
// plan starts with and the library's argument checks.
std::string malformedProblem(const GemmProblem& problem);

}  // namespace gemmtune
