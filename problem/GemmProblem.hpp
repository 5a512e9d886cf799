// GemmProblem: what one SGEMM call is, as every layer sees it — sizes, leading dimensions, how
// the base pointers are aligned and whether beta is zero. Launch plans, the worker, the library
// and the lookup all describe a call with it; it sits below the device layer and the generator so
// that both can speak of problems without depending on each other.
#pragma once

#include <cstdint>
#include <string>

namespace gemmtune {

// Row-major C (M×N, ldc) = alpha·A (M×K, lda)·B (K×N, ldb) + beta·C.
struct GemmProblem {
  long long m = 0, n = 0, k = 0;
  long long lda = 0, ldb = 0, ldc = 0;
  int alignA = 16, alignB = 16, alignC = 16;  // bytes: the largest power of two (≤ 16) dividing the address
  bool betaZero = true;

  // Densely packed (lda = K, ldb = N, ldc = N), base pointers 16-byte aligned (as cuMemAlloc gives).
  static GemmProblem packed(long long m, long long n, long long k);
  static int alignmentOf(std::uintptr_t address);
  std::string text() const;  // "1000x1000x1000 lda 1003 ldb 1000 ldc 1000 A+4B"
};

// Why no kernel can run `problem` (a dimension below 1, a leading dimension below its row
// length), or empty: the checks every plan starts with.
std::string malformedProblem(const GemmProblem& problem);

}  // namespace gemmtune
