#include "ProblemLayout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>

#include "gemmtune/Errors.hpp"

namespace gemmtune {

namespace {

// Padded geometries round each row up to whole float4s first: at odd sizes the packed layout
// then runs the scalar paths of forms that choose per launch, and the padded one their vector
// paths with ragged last chunks.
long long paddedLd(long long extent, int pad) { return pad == 0 ? extent : (extent + 3) / 4 * 4 + pad; }

// `count` matrices from `front`, `gap` floats apart, then `tail` floats.
OperandPlacement strided(long long rows, long long cols, long long ld, long long count, long long front, long long gap,
                         long long tail) {
  OperandPlacement o{rows, cols, ld, count, front};
  o.stride = count > 1 ? rows * ld + gap : 0;
  o.allocElems = front + (count - 1) * o.stride + o.span() + tail;
  return o;
}

// `count` slots of one matrix and `slack` floats each, from `front`, then `tail` floats.
OperandPlacement scattered(long long rows, long long cols, long long ld, long long count, long long front,
                           long long slack, long long tail) {
  OperandPlacement o{rows, cols, ld, count, front};
  o.slot = rows * ld + slack;
  o.allocElems = front + count * o.slot + tail;
  return o;
}

bool storesInputsAsGiven(const CheckGeometry& g) {
  return g.padA == 0 && g.padB == 0 && g.padC == 0 && g.offsetBytes == 0 && g.gapA == 0 && g.gapB == 0 && g.gapC == 0 &&
         !g.pointerArrays;
}

// The largest power of two (≤ 16 bytes) dividing every matrix's address, as problemOf derives it.
int alignmentOf(const OperandPlacement& o) {
  const int base = GemmProblem::alignmentOf(static_cast<std::uintptr_t>(4 * o.start(0)));
  return o.count > 1 ? std::min(base, GemmProblem::alignmentOf(static_cast<std::uintptr_t>(4 * o.stride))) : base;
}

}  // namespace

long long OperandPlacement::start(long long b) const {
  if (slot == 0) return front + b * stride;
  const ProblemLayout::Slot s = ProblemLayout::arraySlot(count, b);
  return front + s.index * slot + s.first;
}

ProblemLayout::Slot ProblemLayout::arraySlot(long long batch, long long b) {
  const long long r = b % 29;  // (11·b² + 3·b) mod 29 without overflow
  return {batch - 1 - b, 1 + (11 * r * r + 3 * r) % 29};
}

ProblemLayout ProblemLayout::of(const Problem& p, long long l2Bytes) {
  if (p.M < 1 || p.N < 1 || p.K < 1)
    throw UsageError(fmt::format("problem {}: every dimension must be at least 1", p.shape().str()));
  if (p.M > INT_MAX || p.N > INT_MAX || p.K > INT_MAX)
    throw UsageError(fmt::format("problem {}: dimensions above {} are not supported", p.shape().str(), INT_MAX));
  if (p.batch < 1 || p.batch > INT_MAX)
    throw UsageError(fmt::format("problem {}: the batch count must be 1 to {}", p.shape().str(), INT_MAX));
  const double floats = static_cast<double>(p.batch) * (double(p.M) * p.K + double(p.K) * p.N + double(p.M) * p.N);
  if (floats > 1e15)
    throw UsageError(fmt::format("problem {}: {:.3g} floats per operand set is more than any GPU holds", p.shape().str(), floats));
  ProblemLayout l;
  l.aElems = p.batch * p.M * p.K;
  l.bElems = p.batch * p.K * p.N;
  l.cElems = p.batch * p.M * p.N;

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
  // Per verification layout: a guarded C, A and B unless the inputs serve as they are, and the
  // three device arrays of pointers (two floats each).
  for (const CheckGeometry* g : geometries(p)) {
    const CheckPlacement pl = place(p, *g);
    long long elems = pl.c.allocElems + (pl.ownA ? pl.a.allocElems : 0) + (pl.ownB ? pl.b.allocElems : 0);
    if (pl.c.slot) elems += 2 * 3 * p.batch;
    l.deviceBytes += 4ull * static_cast<std::uint64_t>(elems);
  }
  return l;
}

std::vector<const CheckGeometry*> ProblemLayout::geometries(const Problem& p) {
  std::vector<const CheckGeometry*> out;
  for (const CheckGeometry& g : kCheckGeometries)
    if (!g.pointerArrays || p.batch > 1) out.push_back(&g);
  return out;
}

CheckPlacement ProblemLayout::place(const Problem& p, const CheckGeometry& g) {
  const bool tA = p.layout.transA, tB = p.layout.transB;
  const long long rowsA = tA ? p.K : p.M, colsA = tA ? p.M : p.K, rowsB = tB ? p.N : p.K, colsB = tB ? p.K : p.N;
  const long long lda = paddedLd(colsA, g.padA), ldb = paddedLd(colsB, g.padB), ldc = paddedLd(p.N, g.padC);
  const long long n = p.batch, offset = g.offsetBytes / 4;
  CheckPlacement pl;
  if (g.pointerArrays && n > 1) {
    pl.a = scattered(rowsA, colsA, lda, n, offset, kArraySlack, 0);
    pl.b = scattered(rowsB, colsB, ldb, n, offset, kArraySlack, 0);
    pl.c = scattered(p.M, p.N, ldc, n, kGuardElems + offset, kGuardElems, kGuardElems);
  } else {
    pl.a = strided(rowsA, colsA, lda, n, offset, g.gapA, 0);
    pl.b = strided(rowsB, colsB, ldb, n, offset, g.gapB, 0);
    pl.c = strided(p.M, p.N, ldc, n, kGuardElems + offset, g.gapC, kGuardElems);
  }
  // Packed and not transposed, the problem's own inputs are laid out exactly so.
  pl.ownA = !storesInputsAsGiven(g) || tA;
  pl.ownB = !storesInputsAsGiven(g) || tB;
  return pl;
}

GemmProblem ProblemLayout::checkProblem(const Problem& p, const CheckGeometry& g, bool betaZero) {
  const CheckPlacement pl = place(p, g);
  GemmProblem gp;
  gp.m = p.M, gp.n = p.N, gp.k = p.K;
  gp.layout = p.layout;
  gp.lda = pl.a.ld, gp.ldb = pl.b.ld, gp.ldc = pl.c.ld;
  gp.batch = p.batch;
  if (pl.c.slot) {
    gp.pointerArrays = true;
    gp.alignA = gp.alignB = gp.alignC = 4;  // as problemOf: the pointers are not read on the host
  } else {
    gp.strideA = pl.a.stride, gp.strideB = pl.b.stride, gp.strideC = pl.c.stride;
    gp.alignA = alignmentOf(pl.a), gp.alignB = alignmentOf(pl.b), gp.alignC = alignmentOf(pl.c);
  }
  gp.betaZero = betaZero;
  return gp;
}

std::vector<GemmProblem> ProblemLayout::checkProblems(const Problem& p) {
  std::vector<GemmProblem> out;
  for (const CheckGeometry* g : geometries(p))
    for (bool betaZero : {true, false}) out.push_back(checkProblem(p, *g, betaZero));
  return out;
}

}  // namespace gemmtune
