#include "LaunchArgs.hpp"

#include <algorithm>
#include <stdexcept>

namespace gemmtune {

GemmProblem problemOf(const SgemmArgs& a) {
  GemmProblem p;
  p.m = a.m, p.n = a.n, p.k = a.k;
  p.layout = a.layout;
  p.lda = a.lda, p.ldb = a.ldb, p.ldc = a.ldc;
  p.batch = a.batch.count;
  p.pointerArrays = a.batch.arrayA != 0;
  if (p.pointerArrays) {  // the arrays are on the device: every matrix may be only 4-byte aligned
    p.alignA = p.alignB = p.alignC = 4;
  } else {
    p.strideA = a.batch.strideA, p.strideB = a.batch.strideB, p.strideC = a.batch.strideC;
    const bool batched = p.batch > 1;
    auto align = [&](CUdeviceptr base, long long stride) {
      return std::min(GemmProblem::alignmentOf(base), batched ? GemmProblem::alignmentOf(static_cast<std::uintptr_t>(stride) * 4) : 16);
    };
    p.alignA = align(a.a, p.strideA), p.alignB = align(a.b, p.strideB), p.alignC = align(a.c, p.strideC);
  }
  p.betaZero = a.beta == 0.0f;
  return p;
}

ArgumentPack::ArgumentPack(const KernelLaunch& launch, const SgemmArgs& args) : values_(args) {
  if (launch.args.size() > pointers_.size()) throw std::length_error("a kernel of more than 16 arguments");
  for (size_t i = 0; i < launch.args.size(); ++i) {
    void* p = nullptr;
    switch (launch.args[i]) {
      case KernelArg::M: p = &values_.m; break;
      case KernelArg::N: p = &values_.n; break;
      case KernelArg::K: p = &values_.k; break;
      case KernelArg::Alpha: p = &values_.alpha; break;
      case KernelArg::A: p = &values_.a; break;
      case KernelArg::Lda: p = &values_.lda; break;
      case KernelArg::B: p = &values_.b; break;
      case KernelArg::Ldb: p = &values_.ldb; break;
      case KernelArg::Beta: p = &values_.beta; break;
      case KernelArg::C: p = &values_.c; break;
      case KernelArg::Ldc: p = &values_.ldc; break;
      case KernelArg::Batch: p = &values_.batch; break;
      case KernelArg::Workspace: p = &values_.workspace; break;
    }
    pointers_[i] = p;
  }
}

}  // namespace gemmtune
