// How one product over JAX's dense, row-major arrays becomes library calls. Under jax.vmap an array
// has any number of leading (batch) dimensions: the vmapped ones first, equal in every operand, then
// at most one of the call's own, where an operand of one matrix serves every batch. Where the
// leading dimensions flatten into one strided batch (the usual case) that is one call; where an
// operand is broadcast along the last of them only, one call per index of the others.
#pragma once

#include <cstdint>

#include "ViewPlan.hpp"

namespace gemmtune::python {

struct StackedCall {
  std::int64_t calls = 1;                               // library calls
  std::int64_t strideA = 0, strideB = 0, strideOut = 0;  // elements from one call's operands to the next's
  TensorView a, b, out;                                 // the first call's views
};

// Throws std::invalid_argument naming the argument when the dimensions do not fit these rules.
StackedCall stackBatches(const Dims& a, const Dims& b, const Dims& out, std::uintptr_t dataA, std::uintptr_t dataB,
                         std::uintptr_t dataOut);

}  // namespace gemmtune::python
