#include "GemmProblem.hpp"

#include <fmt/format.h>

namespace gemmtune {

namespace {

std::string alignText(const char* what, int bytes) { return bytes >= 16 ? "" : fmt::format(" {}+{}B", what, bytes); }

}  // namespace

GemmProblem GemmProblem::packed(long long m, long long n, long long k) {
  GemmProblem p;
  p.m = m, p.n = n, p.k = k;
  p.lda = k, p.ldb = n, p.ldc = n;
  return p;
}

int GemmProblem::alignmentOf(std::uintptr_t address) {
  int a = 16;
  while (a > 1 && address % static_cast<std::uintptr_t>(a) != 0) a /= 2;
  return a;
}

std::string GemmProblem::text() const {
  std::string out = fmt::format("{}x{}x{}", m, n, k);
  if (lda != k || ldb != n || ldc != n) out += fmt::format(" lda {} ldb {} ldc {}", lda, ldb, ldc);
  return out + alignText("A", alignA) + alignText("B", alignB) + alignText("C", alignC);
}

std::string malformedProblem(const GemmProblem& p) {
  if (p.m < 1 || p.n < 1 || p.k < 1) return fmt::format("{}: every dimension must be at least 1", p.text());
  if (p.lda < p.k || p.ldb < p.n || p.ldc < p.n) return fmt::format("{}: leading dimensions below the row lengths", p.text());
  return {};
}

}  // namespace gemmtune
