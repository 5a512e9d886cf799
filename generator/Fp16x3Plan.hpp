// Fp16x3Plan: what the fp16x3 families share (templates/fp16x3_passes.cuh around their FP16
// GEMM: cutlass_fp16x3.cu on mma.sync, wgmma_fp16x3.cu on Hopper's wgmma): the scratch they need
// and the eight launches — per operand maxima, scales and split (kernels 1–3 for A, 4–6 for B),
// the family's GEMM (kernel 0), unscale (kernel 7).
#pragma once

#include <string>
#include <vector>

#include "Family.hpp"
#include "LaunchPlan.hpp"

namespace gemmtune {

// The split operands are 1.5 times the FP32 ones and D is C's size: scratch beyond this is refused.
inline constexpr long long kFp16x3MaxScratchBytes = 16LL << 30;

// The scratch of one batch, the region the eight launches share past the zeroed prefix
// (gemmtune_fp16x3_layout); -1 beyond kFp16x3MaxScratchBytes.
long long fp16x3ScratchPerBatch(long long m, long long n, long long k);

// The family's GEMM grid in x and y for `p`'s M rows and `np` columns (N rounded up to 8), or why
// it cannot be launched. Asked only once the sizes are known to be ints.
struct Fp16x3Grid {
  Dim3 grid;
  std::string refusal;
};
using Fp16x3GridOf = Fp16x3Grid (*)(const Config& c, const GemmProblem& p, long long np);

// The family's eight launches for `p` (the GEMM: `gridOf`'s grid with the batches in z, the
// family's threads and shared memory), or the first refusal: malformed problems, sizes beyond
// int, unaligned operands, the GEMM's grid, batches beyond grid z, scratch beyond its limit, K
// beyond the split's grid.
LaunchPlan fp16x3Plan(const Config& c, const GemmProblem& p, Fp16x3GridOf gridOf);

// The names of kernels 1–7 for `c`'s layout.
std::vector<std::string> fp16x3PassKernels(const Config& c);

}  // namespace gemmtune
