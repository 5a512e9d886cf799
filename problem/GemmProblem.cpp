#include "GemmProblem.hpp"

#include <fmt/format.h>

namespace gemmtune {

namespace {

std::string alignText(const char* what, int bytes) { return bytes >= 16 ? "" : fmt::format(" {}+{}B", what, bytes); }

}  // namespace

GemmProblem GemmProblem::packed(const GemmShape& s) {
  GemmProblem p;
  p.m = s.M, p.n = s.N, p.k = s.K;
  p.layout = s.layout;
  p.batch = s.batch;
  p.lda = p.colsA(), p.ldb = p.colsB(), p.ldc = p.n;
  if (p.batch > 1) {
    p.strideA = p.rowsA() * p.lda, p.strideB = p.rowsB() * p.ldb, p.strideC = p.m * p.ldc;
    // Every batch's matrix is as aligned as its offset from the (16-byte aligned) base.
    p.alignA = alignmentOf(static_cast<std::uintptr_t>(p.strideA) * 4);
    p.alignB = alignmentOf(static_cast<std::uintptr_t>(p.strideB) * 4);
    p.alignC = alignmentOf(static_cast<std::uintptr_t>(p.strideC) * 4);
  }
  return p;
}

int GemmProblem::alignmentOf(std::uintptr_t address) {
  int a = 16;
  while (a > 1 && address % static_cast<std::uintptr_t>(a) != 0) a /= 2;
  return a;
}

std::string GemmProblem::text() const {
  std::string out = fmt::format("{}x{}x{}", m, n, k);
  if (layout != Layout{}) out += " " + layout.text();
  if (lda != colsA() || ldb != colsB() || ldc != n) out += fmt::format(" lda {} ldb {} ldc {}", lda, ldb, ldc);
  out += alignText("A", alignA) + alignText("B", alignB) + alignText("C", alignC);
  if (batch != 1) {
    out += fmt::format(" batch {}", batch);
    if (pointerArrays) out += " (pointer arrays)";
    else out += fmt::format(" (strides {} {} {})", strideA, strideB, strideC);
  }
  return out;
}

std::string malformedProblem(const GemmProblem& p) {
  if (p.m < 1 || p.n < 1 || p.k < 1) return fmt::format("{}: every dimension must be at least 1", p.text());
  if (p.lda < p.colsA()) return fmt::format("{}: lda must be at least {} (A's stored row length)", p.text(), p.colsA());
  if (p.ldb < p.colsB()) return fmt::format("{}: ldb must be at least {} (B's stored row length)", p.text(), p.colsB());
  if (p.ldc < p.n) return fmt::format("{}: ldc must be at least N = {}", p.text(), p.n);
  if (p.batch < 1) return fmt::format("{}: the batch count must be at least 1", p.text());
  if (p.batch > 1 && !p.pointerArrays) {
    if (p.strideA < 0 || p.strideB < 0 || p.strideC < 0) return fmt::format("{}: batch strides must not be negative", p.text());
    // Batches may share A or B (stride 0 broadcasts) but each writes its own C.
    if (p.strideC < (p.m - 1) * p.ldc + p.n)
      return fmt::format("{}: strideC must be at least {} ((M - 1)·ldc + N) so that the batches' C do not overlap",
                         p.text(), (p.m - 1) * p.ldc + p.n);
  }
  return {};
}

}  // namespace gemmtune
