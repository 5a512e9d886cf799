// How a framework's tensors (shape and strides, in elements) become one Library call: which
// operand is read transposed, the leading dimensions, the batch strides, and whether the product
// has to be computed transposed because `out` is a column-major view. No copies are made: a
// stride pattern the library cannot read directly is refused with a message naming the argument.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "gemmtune/Library.hpp"

namespace gemmtune::python {

// A tensor's extents or strides, kept inline because converting them is part of every call's cost.
// Of a view with more than kMaxDims dimensions only the first kMaxDims are kept, and `count` says
// how many it has (planGemm refuses it by that count).
struct Dims {
  static constexpr int kMaxDims = 8;
  int count = 0;
  std::array<std::int64_t, kMaxDims> values{};

  Dims() = default;
  Dims(std::initializer_list<std::int64_t> list) {
    for (std::int64_t v : list) values[count++] = v;
  }
  std::size_t size() const { return static_cast<std::size_t>(count); }
  std::int64_t operator[](std::size_t i) const { return values[i]; }
  std::int64_t back() const { return values[count - 1]; }
  const std::int64_t* begin() const { return values.data(); }
  const std::int64_t* end() const { return values.data() + std::min(count, kMaxDims); }
  bool operator==(const Dims& other) const {
    return count == other.count && std::equal(begin(), end(), other.begin());
  }
};

// One tensor argument as the Python side describes it.
struct TensorView {
  std::uintptr_t data = 0;
  Dims shape;
  Dims strides;  // in elements, one per dimension
};

// A row-major Library call. `launch` is false when there is nothing to compute (M or N is 0) or
// only C to scale (K is 0: C = beta·C, which the Python side does with the framework's own op).
struct GemmPlan {
  bool launch = true;
  bool scaleOnly = false;  // K == 0 with M, N > 0
  Op opA = Op::N, opB = Op::N;
  int M = 0, N = 0, K = 0;
  std::uintptr_t A = 0, B = 0, C = 0;
  int lda = 0, ldb = 0, ldc = 0;
  long long strideA = 0, strideB = 0, strideC = 0;
  int batch = 1;
  bool batched = false;  // any argument is 3-D: run as a strided batch
};

// Throws std::invalid_argument (Python's ValueError) naming the argument ("a", "b" or "out").
GemmPlan planGemm(const TensorView& a, const TensorView& b, const TensorView& out);

// The shape planGemm expects of `out` for a and b (for allocating it): (batch,) M, N.
Dims resultShape(const Dims& aShape, const Dims& bShape);

}  // namespace gemmtune::python
