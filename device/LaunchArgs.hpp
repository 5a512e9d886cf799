// LaunchArgs: one SGEMM's operands, and the argument array cuLaunchKernel takes for one kernel of
// a launch plan, built from the plan's argument list (KernelArg) — the only place an argument
// array is built.
#pragma once

#include <cuda.h>

#include <array>

#include "LaunchPlan.hpp"

namespace gemmtune {

// The kernels' batch argument, laid out exactly as templates/batch.cuh's GemmtuneBatch: batch b
// reads A + b·strideA (elements) or arrayA[b], and so on; the arrays are null when strided.
struct BatchArg {
  long long strideA = 0, strideB = 0, strideC = 0;
  CUdeviceptr arrayA = 0, arrayB = 0, arrayC = 0;
  int count = 1;
};
static_assert(sizeof(BatchArg) == 56, "BatchArg must match templates/batch.cuh");

struct SgemmArgs {
  int m = 0, n = 0, k = 0;
  float alpha = 1.0f;
  CUdeviceptr a = 0;
  int lda = 0;
  CUdeviceptr b = 0;
  int ldb = 0;
  float beta = 0.0f;
  CUdeviceptr c = 0;
  int ldc = 0;
  CUdeviceptr workspace = 0;  // the plan's workspace, when it needs one
  Layout layout{};            // how A and B are stored (their leading dimensions follow it)
  BatchArg batch{};
};

// The problem these operands pose (sizes, layout, leading dimensions, batch, pointer alignment,
// beta class).
GemmProblem problemOf(const SgemmArgs& args);

// Argument pointers for one launch; they point into this object, so it is neither copied nor moved.
class ArgumentPack {
 public:
  ArgumentPack(const KernelLaunch& launch, const SgemmArgs& args);
  ArgumentPack(const ArgumentPack&) = delete;
  ArgumentPack& operator=(const ArgumentPack&) = delete;
  void** pointers() { return pointers_.data(); }

 private:
  SgemmArgs values_;
  std::array<void*, 16> pointers_{};
};

}  // namespace gemmtune
