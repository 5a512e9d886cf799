#include "ViewPlan.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <climits>
#include <stdexcept>
#include <initializer_list>
#include <tuple>

namespace gemmtune::python {
namespace {

[[noreturn]] void refuse(const std::string& message) { throw std::invalid_argument(message); }

void checkRank(const char* name, const Dims& shape) {
  if (shape.size() != 2 && shape.size() != 3)
    refuse(fmt::format("{} has {} dimension(s) ({}); gemmtune.matmul takes matrices (2-D) or batches of them (3-D)",
                       name, shape.size(), fmt::join(shape, "x")));
}

int toInt(const char* name, const char* what, std::int64_t value) {
  if (value > INT_MAX)
    refuse(fmt::format("{}'s {} is {}: gemmtune's kernels take dimensions and leading dimensions up to {}",
                       name, what, value, INT_MAX));
  return static_cast<int>(value);
}

// One matrix of a view (its last two dimensions) as the library reads it: stored as is with each
// row contiguous (Op::N, ld = row stride) or transposed, each column contiguous (Op::T, ld =
// column stride). A dimension of extent 1 has no meaningful stride, so either reading may apply.
struct MatrixReading {
  Op op = Op::N;
  std::int64_t ld = 0;
};

MatrixReading readMatrix(const char* name, const TensorView& view) {
  const std::size_t r = view.shape.size() - 2;
  const std::int64_t rows = view.shape[r], cols = view.shape[r + 1];
  const std::int64_t rowStride = view.strides[r], colStride = view.strides[r + 1];
  if (rowStride < 0 || colStride < 0)
    refuse(fmt::format("{} has negative strides ({}); pass a copy ({}.copy() or .contiguous())", name,
                       fmt::join(view.strides, ", "), name));
  const std::int64_t rowLd = rows == 1 ? cols : rowStride;
  if ((colStride == 1 || cols == 1) && rowLd >= cols) return {Op::N, rowLd};
  const std::int64_t colLd = cols == 1 ? rows : colStride;
  if ((rowStride == 1 || rows == 1) && colLd >= rows) return {Op::T, colLd};
  refuse(fmt::format("{} ({}, strides {}) is neither row- nor column-contiguous; gemmtune reads matrices "
                     "whose rows or columns are contiguous: pass {}.contiguous()",
                     name, fmt::join(view.shape, "x"), fmt::join(view.strides, ", "), name));
}

// Elements between one batch's matrix and the next; 0 where the view has one matrix for all.
std::int64_t batchStride(const char* name, const TensorView& view) {
  if (view.shape.size() != 3 || view.shape[0] == 1) return 0;
  if (view.strides[0] < 0)
    refuse(fmt::format("{} has a negative batch stride ({}); pass a copy", name, view.strides[0]));
  return view.strides[0];
}

Op flipped(Op op) { return op == Op::N ? Op::T : Op::N; }

// The bytes a view spans, from its first element to one past its last (strides are not negative
// here, extents not 0).
struct ByteSpan {
  std::uintptr_t begin = 0, end = 0;
  bool meets(const ByteSpan& other) const { return begin < other.end && other.begin < end; }
};

ByteSpan spanOf(const TensorView& view) {
  std::uintptr_t last = 0;
  for (std::size_t i = 0; i < view.shape.size(); ++i)
    last += static_cast<std::uintptr_t>(view.shape[i] - 1) * static_cast<std::uintptr_t>(view.strides[i]);
  return {view.data, view.data + 4 * (last + 1)};
}

// A single matrix as lines of contiguous elements: `count` lines of `length` elements, `ld` apart
// (rows for an Op::N reading, columns for Op::T).
struct Lines {
  std::int64_t count = 0, length = 0, ld = 0;
};

Lines linesOf(const TensorView& view, const MatrixReading& reading) {
  const std::size_t r = view.shape.size() - 2;
  const std::int64_t rows = view.shape[r], cols = view.shape[r + 1];
  return reading.op == Op::N ? Lines{rows, cols, reading.ld} : Lines{cols, rows, reading.ld};
}

bool intervalsMeet(std::int64_t start1, std::int64_t size1, std::int64_t start2, std::int64_t size2) {
  return start1 < start2 + size2 && start2 < start1 + size1;
}

// Whether y, starting d >= 0 elements after x with the same ld, shares an element with x. With
// d = q·ld + s (0 <= s < ld), y's element i of line l is x's element s + i of line l + q, or,
// past that line's end, element s + i − ld of line l + q + 1.
bool sameLdLinesMeet(const Lines& x, const Lines& y, std::int64_t d) {
  const std::int64_t q = d / x.ld, s = d % x.ld;
  return (intervalsMeet(s, y.length, 0, x.length) && intervalsMeet(q, y.count, 0, x.count)) ||
         (intervalsMeet(s - x.ld, y.length, 0, x.length) && intervalsMeet(q + 1, y.count, 0, x.count));
}

// Like PyTorch's out= checks: an out that shares memory with an input is refused, since the
// kernel would overwrite elements it has still to read. Single matrices with the same leading
// dimension are compared element-exactly (disjoint column slices of one buffer pass); any other
// pair by the byte ranges they span.
bool viewsMeet(const TensorView& x, const MatrixReading& rx, const TensorView& y, const MatrixReading& ry) {
  if (!spanOf(x).meets(spanOf(y))) return false;
  const auto single = [](const TensorView& v) { return v.shape.size() == 2 || v.shape[0] == 1; };
  const Lines lx = linesOf(x, rx), ly = linesOf(y, ry);
  const bool aligned = (x.data > y.data ? x.data - y.data : y.data - x.data) % 4 == 0;
  if (!single(x) || !single(y) || rx.op != ry.op || lx.ld != ly.ld || !aligned) return true;
  return x.data <= y.data ? sameLdLinesMeet(lx, ly, static_cast<std::int64_t>((y.data - x.data) / 4))
                          : sameLdLinesMeet(ly, lx, static_cast<std::int64_t>((x.data - y.data) / 4));
}

void checkStrides(const char* name, const TensorView& view) {
  if (view.strides.size() != view.shape.size())
    refuse(fmt::format("{} has {} strides for {} dimensions", name, view.strides.size(), view.shape.size()));
  if (view.data == 0 && view.shape.count > 0) {
    for (std::int64_t extent : view.shape)
      if (extent == 0) return;  // an empty tensor may have no storage
    refuse(fmt::format("{} has no data pointer", name));
  }
}

void checkNoOverlap(const TensorView& out, const MatrixReading& rc,
                    std::initializer_list<std::tuple<const char*, const TensorView*, const MatrixReading*>> inputs) {
  for (const auto& [name, view, reading] : inputs)
    if (viewsMeet(out, rc, *view, *reading))
      refuse(fmt::format("out overlaps {} in memory: the product would overwrite what it reads; pass a separate out",
                         name));
}

}  // namespace

Dims resultShape(const Dims& aShape, const Dims& bShape) {
  checkRank("a", aShape);
  checkRank("b", bShape);
  const std::int64_t M = aShape[aShape.size() - 2], K = aShape.back();
  const std::int64_t Kb = bShape[bShape.size() - 2], N = bShape.back();
  if (K != Kb)
    refuse(fmt::format("a is {} and b is {}: a's columns ({}) must equal b's rows ({})", fmt::join(aShape, "x"),
                       fmt::join(bShape, "x"), K, Kb));
  if (aShape.size() == 2 && bShape.size() == 2) return {M, N};
  const std::int64_t batchA = aShape.size() == 3 ? aShape[0] : 1;
  const std::int64_t batchB = bShape.size() == 3 ? bShape[0] : 1;
  if (batchA != batchB && batchA != 1 && batchB != 1)
    refuse(fmt::format("a holds {} matrices and b {}: batches must match (or one of them be 1)", batchA, batchB));
  // The batch that is not a broadcast one (a batch of 0 against one matrix is empty, as in NumPy).
  return {batchA == 1 ? batchB : batchA, M, N};
}

GemmPlan planGemm(const TensorView& a, const TensorView& b, const TensorView& out) {
  const Dims expected = resultShape(a.shape, b.shape);
  if (out.shape != expected)
    refuse(fmt::format("out has shape {}, expected {} for a {} times b {}", fmt::join(out.shape, "x"),
                       fmt::join(expected, "x"), fmt::join(a.shape, "x"), fmt::join(b.shape, "x")));
  checkStrides("a", a);
  checkStrides("b", b);
  checkStrides("out", out);

  GemmPlan plan;
  const std::int64_t M = expected[expected.size() - 2], N = expected.back(), K = a.shape.back();
  const std::int64_t batch = expected.size() == 3 ? expected[0] : 1;
  if (M == 0 || N == 0 || batch == 0) {
    plan.launch = false;
    return plan;
  }
  if (K == 0) {
    plan.launch = false;
    plan.scaleOnly = true;
    return plan;
  }
  const MatrixReading ra = readMatrix("a", a), rb = readMatrix("b", b), rc = readMatrix("out", out);
  checkNoOverlap(out, rc, {{"a", &a, &ra}, {"b", &b, &rb}});
  plan.batched = expected.size() == 3;
  plan.batch = toInt("out", "batch count", batch);
  plan.K = toInt("a", "column count", K);
  plan.strideC = batchStride("out", out);
  const long long strideA = batchStride("a", a), strideB = batchStride("b", b);
  plan.ldc = toInt("out", "leading dimension", rc.ld);
  if (rc.op == Op::N) {  // C = op(A)·op(B), row-major
    plan.M = toInt("a", "row count", M), plan.N = toInt("b", "column count", N);
    plan.opA = ra.op, plan.opB = rb.op;
    plan.A = a.data, plan.B = b.data, plan.C = out.data;
    plan.lda = toInt("a", "leading dimension", ra.ld), plan.ldb = toInt("b", "leading dimension", rb.ld);
    plan.strideA = strideA, plan.strideB = strideB;
  } else {  // out is column-major: compute its row-major transpose, Cᵀ = op(B)ᵀ·op(A)ᵀ
    plan.M = toInt("b", "column count", N), plan.N = toInt("a", "row count", M);
    plan.opA = flipped(rb.op), plan.opB = flipped(ra.op);
    plan.A = b.data, plan.B = a.data, plan.C = out.data;
    plan.lda = toInt("b", "leading dimension", rb.ld), plan.ldb = toInt("a", "leading dimension", ra.ld);
    plan.strideA = strideB, plan.strideB = strideA;
  }
  return plan;
}

}  // namespace gemmtune::python
