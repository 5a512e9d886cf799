#include "Fp16x3Plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

namespace gemmtune {

namespace {

// The padded sizes the passes work in, as gemmtune_fp16x3_layout pads them
// (templates/fp16x3_passes.cuh): N to whole 8-column mma tiles, K to whole 64-deep split tiles,
// and the k chunks (of 512, at most 64) the maxima pass reads.
struct PaddedSizes {
  long long np, kp, chunks;
};
PaddedSizes paddedSizes(long long n, long long k) { return {(n + 7) / 8 * 8, (k + 63) / 64 * 64, std::min(64LL, (k + 511) / 512)}; }

}  // namespace

long long fp16x3ScratchPerBatch(long long m, long long n, long long k) {
  const auto [np, kp, chunks] = paddedSizes(n, k);
  // Judged in double first: sizes near int's limit would overflow the exact sum.
  const double approx = 6.0 * kp * (static_cast<double>(m) + np) + 4.0 * static_cast<double>(m) * np;
  if (approx > static_cast<double>(kFp16x3MaxScratchBytes)) return -1;
  auto up = [](long long bytes) { return (bytes + 255) / 256 * 256; };
  const long long bytes = 2 * up(4 * m) + 2 * up(4 * np) + up(2 * m * 3 * kp) + up(2 * np * 3 * kp) +
                          up(4 * m * np) + up(8 * chunks * m) + up(8 * chunks * np);
  return bytes > kFp16x3MaxScratchBytes ? -1 : bytes;
}

namespace {

// What fp16x3Plan refuses before looking at the GEMM, or "".
std::string fp16x3Refusal(const GemmProblem& p) {
  if (std::string why = malformedProblem(p); !why.empty()) return why;
  constexpr long long kIntMax = std::numeric_limits<int>::max();
  const PaddedSizes padded = paddedSizes(p.n, p.k);
  if (p.m > kIntMax || padded.np > kIntMax || 3 * padded.kp > kIntMax || p.lda > kIntMax || p.ldb > kIntMax || p.ldc > kIntMax)
    return fmt::format("{}: sizes and leading dimensions are passed as int", p.text());
  if (p.alignA < 4 || p.alignB < 4 || p.alignC < 4)
    return fmt::format("{}: A, B and C must be 4-byte aligned floats", p.text());
  return "";
}

}  // namespace

LaunchPlan fp16x3Plan(const Config& c, const GemmProblem& p, Fp16x3GridOf gridOf) {
  if (std::string why = fp16x3Refusal(p); !why.empty()) return LaunchPlan::refused(std::move(why));
  const auto [np, kp, chunkCount] = paddedSizes(p.n, p.k);
  const Fp16x3Grid gemm = gridOf(c, p, np);
  if (!gemm.refusal.empty()) return LaunchPlan::refused(gemm.refusal);
  if (p.batch > kMaxGridYZ)
    return LaunchPlan::refused(fmt::format("{}: {} batches exceed the grid's {} in z", p.text(), p.batch, kMaxGridYZ));
  const long long perBatch = fp16x3ScratchPerBatch(p.m, p.n, p.k);
  if (perBatch < 0 || perBatch > kFp16x3MaxScratchBytes / p.batch)
    return LaunchPlan::refused(fmt::format("{}: the split operands and the product need more than {} GiB of workspace",
                                           p.text(), kFp16x3MaxScratchBytes >> 30));
  if (kp / 64 > kMaxGridYZ)
    return LaunchPlan::refused(fmt::format("{}: K of {} exceeds the split's grid ({} k tiles of 64 in y)", p.text(), p.k,
                                           kMaxGridYZ));
  using A = KernelArg;
  const unsigned batches = static_cast<unsigned>(p.batch);
  const Dim3 tileBlock{32, 8, 1}, lineBlock{256, 1, 1};
  const unsigned chunks = static_cast<unsigned>(chunkCount), kTiles = static_cast<unsigned>(kp / 64);
  // An operand's three passes (kernels first, first + 1, first + 2) over `lines` lines.
  auto passes = [&](int first, long long lines, KernelArg x, KernelArg ld) {
    const unsigned blocks32 = static_cast<unsigned>((lines + 31) / 32), blocks256 = static_cast<unsigned>((lines + 255) / 256);
    const std::vector<KernelArg> args{A::M, A::N, A::K, x, ld, A::Batch, A::Workspace};
    return std::vector<KernelLaunch>{{first, Dim3{blocks32, chunks, batches}, tileBlock, 0, args},
                                     {first + 1, Dim3{blocks256, 1, batches}, lineBlock, 0, args},
                                     {first + 2, Dim3{blocks32, kTiles, batches}, tileBlock, 0, args}};
  };
  LaunchPlan plan;
  plan.launches = passes(1, p.m, A::A, A::Lda);
  for (KernelLaunch& l : passes(4, np, A::B, A::Ldb)) plan.launches.push_back(std::move(l));
  plan.launches.push_back({0, Dim3{gemm.grid.x, gemm.grid.y, batches},
                           Dim3{static_cast<unsigned>(c.family->threadsPerBlock(c)), 1, 1}, c.family->dynamicSmemBytes(c),
                           {A::M, A::N, A::K, A::Workspace}});
  plan.launches.push_back(
      {7, Dim3{static_cast<unsigned>((p.n + 1023) / 1024), static_cast<unsigned>(std::min<long long>((p.m + 7) / 8, kMaxGridYZ)), batches},
       lineBlock, 0, {A::M, A::N, A::K, A::Alpha, A::A, A::Lda, A::B, A::Ldb, A::Beta, A::C, A::Ldc, A::Batch, A::Workspace}});
  plan.workspaceBytes = kZeroedWorkspaceBytes + p.batch * perBatch;
  plan.tileM = c["BM"];
  plan.tileN = c["BN"];
  return plan;
}

std::vector<std::string> fp16x3PassKernels(const Config& c) {
  const std::string a = c.layout.transA ? "true" : "false", b = c.layout.transB ? "true" : "false";
  std::vector<std::string> kernels;
  for (const auto& [operand, trans] : {std::pair{std::string("true"), a}, std::pair{std::string("false"), b}})
    for (const char* pass : {"maxima", "scales", "split"})
      kernels.push_back(fmt::format("gemmtune_fp16x3_{}<{}, {}>", pass, operand, trans));
  kernels.push_back("gemmtune_fp16x3_unscale<" + a + ", " + b + ">");
  return kernels;
}

}  // namespace gemmtune
