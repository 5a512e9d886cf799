#include "ProblemLayout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>

#include "gemmtune/Errors.hpp"

namespace gemmtune {

ProblemLayout ProblemLayout::of(const Problem& p, long long l2Bytes) {
  if (p.M < 1 || p.N < 1 || p.K < 1)
    throw UsageError(fmt::format("problem {}x{}x{}: every dimension must be at least 1", p.M, p.N, p.K));
  if (p.M > INT_MAX || p.N > INT_MAX || p.K > INT_MAX)
    throw UsageError(fmt::format("problem {}x{}x{}: dimensions above {} are not supported", p.M, p.N, p.K, INT_MAX));
  ProblemLayout l;
  l.aElems = p.M * p.K;
  l.bElems = p.K * p.N;
  l.cElems = p.M * p.N;

  constexpr double kExact = 16777216.0;  // 2^24: FP32 integers are exact up to here
  int range = 8;
  while (range > 1 && static_cast<double>(p.K) * range * range + 2.0 * range > kExact) --range;
  l.intRange = range;

  const std::uint64_t setBytes = 4ull * static_cast<std::uint64_t>(l.aElems + l.bElems + l.cElems);
  const auto wanted = static_cast<std::uint64_t>(2 * std::max(l2Bytes, 0LL));
  l.rotationCopies = static_cast<int>(std::clamp<std::uint64_t>((wanted + setBytes - 1) / setBytes, 1, kMaxRotationCopies));

  // int set: A, B, C0, ref(beta 0), ref(beta 2), |A||B|; normal set: A, B, ref, |A||B|; scratch C;
  // |A| and |B| temporaries.
  const std::uint64_t a = 4ull * l.aElems, b = 4ull * l.bElems, c = 4ull * l.cElems;
  l.deviceBytes = 3 * a + 3 * b + 7 * c + static_cast<std::uint64_t>(l.rotationCopies - 1) * setBytes;
  // Per verification layout: a guarded C, and copies of A and B laid out its way unless packed.
  for (const CheckGeometry& g : kCheckGeometries) {
    const GemmProblem gp = checkProblem(p, g, true);
    long long elems = guardedCElems(p, g);
    if (!g.packed()) elems += operandElems(p.M, gp.lda, g.offsetBytes) + operandElems(p.K, gp.ldb, g.offsetBytes);
    l.deviceBytes += 4ull * static_cast<std::uint64_t>(elems);
  }
  return l;
}

GemmProblem ProblemLayout::checkProblem(const Problem& p, const CheckGeometry& g, bool betaZero) {
  GemmProblem gp;
  gp.m = p.M, gp.n = p.N, gp.k = p.K;
  // Padded geometries round each row up to whole float4s first: at odd sizes the packed layout
  // then runs the scalar paths of forms that choose per launch, and the padded one their vector
  // paths with ragged last chunks.
  auto ld = [&](long long extent, int pad) { return pad == 0 ? extent : (extent + 3) / 4 * 4 + pad; };
  gp.lda = ld(p.K, g.padA), gp.ldb = ld(p.N, g.padB), gp.ldc = ld(p.N, g.padC);
  gp.alignA = gp.alignB = GemmProblem::alignmentOf(static_cast<std::uintptr_t>(g.offsetBytes));
  gp.alignC = GemmProblem::alignmentOf(static_cast<std::uintptr_t>(4 * kGuardElems + g.offsetBytes));
  gp.betaZero = betaZero;
  return gp;
}

std::vector<GemmProblem> ProblemLayout::checkProblems(const Problem& p) {
  std::vector<GemmProblem> out;
  for (const CheckGeometry& g : kCheckGeometries)
    for (bool betaZero : {true, false}) out.push_back(checkProblem(p, g, betaZero));
  return out;
}

long long ProblemLayout::operandElems(long long rows, long long ld, int offsetBytes) { return offsetBytes / 4 + rows * ld; }

long long ProblemLayout::guardedCElems(const Problem& p, const CheckGeometry& g) {
  return 2 * kGuardElems + operandElems(p.M, checkProblem(p, g, true).ldc, g.offsetBytes);
}

}  // namespace gemmtune
