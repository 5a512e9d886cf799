#include "GemmCall.hpp"

#include <fmt/format.h>

#include <cstdint>

namespace gemmtune::library {

namespace {

bool aligned(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % alignof(float) == 0; }

// The stored row (row-major) or column (column-major) length an operand's ld must reach.
struct LdRule {
  const char* name;
  const char* operand;
  int ld;
  const char* leastName;  // "K", "M" or "N"
  int least;
  const char* shape;
};

std::string leadingDimensions(const GemmCall& c) {
  const bool row = c.order == Order::row_major, ta = c.opA == Op::T, tb = c.opB == Op::T;
  const char* order = row ? "row-major" : "column-major";
  // Row-major rows are the second dimension of the stored matrix, column-major columns the first.
  const LdRule rules[] = {
      {"lda", "A", c.lda, row != ta ? "K" : "M", row != ta ? c.k : c.m, ta ? "K x M" : "M x K"},
      {"ldb", "B", c.ldb, row != tb ? "N" : "K", row != tb ? c.n : c.k, tb ? "N x K" : "K x N"},
      {"ldc", "C", c.ldc, row ? "N" : "M", row ? c.n : c.m, "M x N"},
  };
  for (const LdRule& r : rules)
    if (r.ld < r.least)
      return fmt::format("{} = {} is less than {} = {} ({} is stored {}, {})", r.name, r.ld, r.leastName, r.least, r.operand,
                         r.shape, order);
  return {};
}

std::string batchArguments(const GemmCall& c) {
  if (c.batch < 1) return fmt::format("batch = {} must be at least 1", c.batch);
  if (c.pointerArrays()) {
    if (!c.arrayA || !c.arrayB || !c.arrayC)
      return fmt::format("null pointer array for {}", !c.arrayA ? "A" : !c.arrayB ? "B" : "C");
    return {};
  }
  if (c.strideA < 0 || c.strideB < 0 || c.strideC < 0)
    return fmt::format("{} = {} is negative", c.strideA < 0 ? "strideA" : c.strideB < 0 ? "strideB" : "strideC",
                       c.strideA < 0 ? c.strideA : c.strideB < 0 ? c.strideB : c.strideC);
  const bool row = c.order == Order::row_major;
  const long long oneC = row ? (c.m - 1LL) * c.ldc + c.n : (c.n - 1LL) * c.ldc + c.m;
  if (c.batch > 1 && c.strideC < oneC)
    return fmt::format("strideC = {} is less than one C ({} floats): the batches' results would overlap", c.strideC, oneC);
  return {};
}

}  // namespace

std::string invalidArgument(const GemmCall& c) {
  if (c.m < 1 || c.n < 1 || c.k < 1) return fmt::format("M, N and K must be at least 1 (got {}x{}x{})", c.m, c.n, c.k);
  if (c.opA != Op::N && c.opA != Op::T) return "opA must be Op::N or Op::T";
  if (c.opB != Op::N && c.opB != Op::T) return "opB must be Op::N or Op::T";
  if (c.order != Order::row_major && c.order != Order::column_major) return "order must be row_major or column_major";
  if (std::string why = leadingDimensions(c); !why.empty()) return why;
  if (std::string why = batchArguments(c); !why.empty()) return why;
  if (c.pointerArrays()) return {};
  if (!c.a || !c.b || !c.c) return fmt::format("null pointer for {}", !c.a ? "A" : !c.b ? "B" : "C");
  if (!aligned(c.a) || !aligned(c.b) || !aligned(c.c))
    return fmt::format("{} is not aligned to 4 bytes", !aligned(c.a) ? "A" : !aligned(c.b) ? "B" : "C");
  return {};
}

GemmCall asRowMajor(const GemmCall& call) {
  if (call.order == Order::row_major) return call;
  GemmCall r = call;
  r.order = Order::row_major;
  r.opA = call.opB, r.opB = call.opA;
  r.m = call.n, r.n = call.m;
  r.a = call.b, r.lda = call.ldb, r.strideA = call.strideB, r.arrayA = call.arrayB;
  r.b = call.a, r.ldb = call.lda, r.strideB = call.strideA, r.arrayB = call.arrayA;
  return r;
}

}  // namespace gemmtune::library
