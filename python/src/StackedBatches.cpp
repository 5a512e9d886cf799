#include "StackedBatches.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>

namespace gemmtune::python {
namespace {

std::int64_t product(const Dims& d, int from, int to) {
  std::int64_t p = 1;
  for (int i = from; i < to; ++i) p *= d[i];
  return p;
}

// One operand: its view for one call (batch `inner`, 1 when broadcast) and the elements between calls.
struct Operand {
  TensorView view;
  std::int64_t inner = 1, strideBetweenCalls = 0;
  bool full = false;  // its leading dimensions are the result's
  bool single = false;  // one matrix for every batch
};

Operand operandOf(const char* name, const Dims& d, const Dims& out, std::uintptr_t data) {
  const int leading = out.count - 2, rank = d.count;
  if (rank != 2 && rank != out.count)
    throw std::invalid_argument(fmt::format("{} has {} dimensions and the result {}: JAX passed shapes gemmtune "
                                            "cannot batch ({} and {})", name, rank, out.count, fmt::join(d, "x"),
                                            fmt::join(out, "x")));
  Operand o;
  const std::int64_t rows = d[rank - 2], cols = d[rank - 1];
  o.view.data = data;
  if (leading == 0) {
    o.view.shape = {rows, cols};
    o.view.strides = {cols, 1};
    o.full = o.single = true;
    return o;
  }
  o.single = rank == 2 || product(d, 0, leading) == 1;
  if (!o.single) {
    for (int i = 0; i + 1 < leading; ++i)
      if (d[i] != out[i])
        throw std::invalid_argument(fmt::format("{}'s batch dimensions ({}) differ from the result's ({})", name,
                                                fmt::join(d.begin(), d.begin() + leading, "x"),
                                                fmt::join(out.begin(), out.begin() + leading, "x")));
    o.inner = d[leading - 1];
    if (o.inner != out[leading - 1] && o.inner != 1)
      throw std::invalid_argument(fmt::format("{}'s last batch dimension is {}, the result's {}", name, o.inner,
                                              out[leading - 1]));
    o.full = o.inner == out[leading - 1];
    o.strideBetweenCalls = o.inner * rows * cols;
  }
  o.view.shape = {o.inner, rows, cols};
  o.view.strides = {rows * cols, cols, 1};
  return o;
}

// Every leading dimension as one batch: an operand keeps its matrices, or one serves them all.
void flatten(Operand& o, std::int64_t batch) {
  if (o.view.shape.count == 2) return;
  o.view.shape = {o.single ? 1 : batch, o.view.shape[1], o.view.shape[2]};
}

}  // namespace

StackedCall stackBatches(const Dims& a, const Dims& b, const Dims& out, std::uintptr_t dataA, std::uintptr_t dataB,
                         std::uintptr_t dataOut) {
  if (out.count < 2 || out.count > Dims::kMaxDims)
    throw std::invalid_argument(fmt::format("the result has {} dimensions (2 to {} work)", out.count, +Dims::kMaxDims));
  Operand oa = operandOf("a", a, out, dataA), ob = operandOf("b", b, out, dataB), oc = operandOf("out", out, out, dataOut);
  StackedCall call;
  const int leading = out.count - 2;
  if ((oa.full || oa.single) && (ob.full || ob.single)) {
    const std::int64_t batch = product(out, 0, leading);
    flatten(oa, batch), flatten(ob, batch), flatten(oc, batch);
  } else {  // broadcast along the last batch dimension only: one call per index of the others
    call.calls = product(out, 0, leading - 1);
    call.strideA = oa.strideBetweenCalls, call.strideB = ob.strideBetweenCalls, call.strideOut = oc.strideBetweenCalls;
  }
  call.a = oa.view, call.b = ob.view, call.out = oc.view;
  return call;
}

}  // namespace gemmtune::python
