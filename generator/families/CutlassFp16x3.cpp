// Spec of templates/cutlass_fp16x3.cu: FP32 GEMM at FP32 accuracy on FP16 tensor cores — each row of
// op(A) and column of op(B) scaled by a power of two and split into two FP16 parts, three FP16
// products accumulated in FP32 by CUTLASS 2.x's tensor-op GEMM, every mma restarted from zero and
// added into the accumulators, then unscaled. Precision class `faithful`. Eight launches (three passes per operand, the GEMM, unscale) through
// the workspace past its zeroed prefix; batches in grid z; any layout; M, N, K within the plan's
// limits (int sizes, 16 GiB of scratch, K below 2^22 for the split's grid).
#include <fmt/format.h>

#include <limits>
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "../CutlassPlan.hpp"
#include "../FamilyRegistry.hpp"

namespace gemmtune {

namespace {

constexpr int kHalfsPerAccess = 8;

// Scratch beyond this is refused: the split operands are 1.5 times the FP32 ones and D is C's size.
constexpr long long kMaxScratchBytes = 16LL << 30;

// The scratch of one batch, the region the eight launches share past the zeroed prefix
// (templates/cutlass_fp16x3.cu's gemmtune_fp16x3_layout); -1 beyond kMaxScratchBytes, judged in
// double first, since sizes near int's limit would overflow the exact sum.
long long scratchPerBatch(long long m, long long n, long long k) {
  const long long np = (n + 7) / 8 * 8, kp = (k + 63) / 64 * 64, chunks = std::min(64LL, (k + 511) / 512);
  const double approx = 6.0 * kp * (static_cast<double>(m) + np) + 4.0 * static_cast<double>(m) * np;
  if (approx > static_cast<double>(kMaxScratchBytes)) return -1;
  auto up = [](long long bytes) { return (bytes + 255) / 256 * 256; };
  const long long bytes = 2 * up(4 * m) + 2 * up(4 * np) + up(2 * m * 3 * kp) + up(2 * np * 3 * kp) +
                          up(4 * m * np) + up(8 * chunks * m) + up(8 * chunks * np);
  return bytes > kMaxScratchBytes ? -1 : bytes;
}

LaunchPlan fp16x3Plan(const Config& c, const GemmProblem& p) {
  if (std::string why = malformedProblem(p); !why.empty()) return LaunchPlan::refused(std::move(why));
  constexpr long long kIntMax = std::numeric_limits<int>::max();
  const long long kp = (p.k + 63) / 64 * 64, np = (p.n + 7) / 8 * 8;
  if (p.m > kIntMax || np > kIntMax || 3 * kp > kIntMax || p.lda > kIntMax || p.ldb > kIntMax || p.ldc > kIntMax)
    return LaunchPlan::refused(fmt::format("{}: sizes and leading dimensions are passed as int", p.text()));
  if (p.alignA < 4 || p.alignB < 4 || p.alignC < 4)
    return LaunchPlan::refused(fmt::format("{}: A, B and C must be 4-byte aligned floats", p.text()));
  const CutlassGrid tiles = cutlassGrid(c, p, np);
  if (!tiles.refusal.empty()) return LaunchPlan::refused(tiles.refusal);
  if (p.batch > kMaxGridYZ)
    return LaunchPlan::refused(fmt::format("{}: {} batches exceed the grid's {} in z", p.text(), p.batch, kMaxGridYZ));
  const long long perBatch = scratchPerBatch(p.m, p.n, p.k);
  if (perBatch < 0 || perBatch > kMaxScratchBytes / p.batch)
    return LaunchPlan::refused(fmt::format("{}: the split operands and the product need more than {} GiB of workspace",
                                           p.text(), kMaxScratchBytes >> 30));
  const long long bytes = kZeroedWorkspaceBytes + p.batch * perBatch;
  const unsigned batches = static_cast<unsigned>(p.batch);
  using A = KernelArg;
  if (kp / 64 > kMaxGridYZ)
    return LaunchPlan::refused(fmt::format("{}: K of {} exceeds the split's grid ({} k tiles of 64 in y)", p.text(), p.k,
                                           kMaxGridYZ));
  const Dim3 tileBlock{32, 8, 1}, lineBlock{256, 1, 1};
  const unsigned chunks = static_cast<unsigned>(std::min(64LL, (p.k + 511) / 512)), kTiles = static_cast<unsigned>(kp / 64);
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
  plan.launches.push_back({0, Dim3{tiles.x, tiles.y, batches},
                           Dim3{static_cast<unsigned>(c.family->threadsPerBlock(c)), 1, 1}, c.family->dynamicSmemBytes(c),
                           {A::M, A::N, A::K, A::Workspace}});
  plan.launches.push_back(
      {7, Dim3{static_cast<unsigned>((p.n + 1023) / 1024), static_cast<unsigned>(std::min<long long>((p.m + 7) / 8, kMaxGridYZ)), batches},
       lineBlock, 0, {A::M, A::N, A::K, A::Alpha, A::A, A::Lda, A::B, A::Ldb, A::Beta, A::C, A::Ldc, A::Batch, A::Workspace}});
  plan.workspaceBytes = bytes;
  plan.tileM = c["BM"];
  plan.tileN = c["BN"];
  return plan;
}

std::string boolName(bool b) { return b ? "true" : "false"; }

Family fp16x3Family() {
  Family f;
  f.name = "fp16x3";
  f.templateFile = "cutlass_fp16x3.cu";
  f.kernelName = "sgemm_cutlass_fp16x3";
  f.description = "FP32 on FP16 tensor cores at FP32 accuracy: rows and columns scaled by powers of two, split in two "
                  "FP16 parts, CUTLASS tensor-op GEMM, every mma.sync 16×8×16 restarted from zero and added in FP32";
  f.precision = PrecisionClass::faithful;
  f.order = 55;
  f.params = {
      {"BM", "bm", {64, 128, 256}, "rows of the C tile per block (threadblock M)"},
      {"BN", "bn", {64, 128, 256}, "columns of the C tile per block (threadblock N)"},
      {"BK", "bk", {64}, "depth of a k tile per pipeline stage, a multiple of the mma's 16"},
      {"WM", "wm", {32, 64}, "rows of a warp tile (a multiple of the mma's 16)"},
      {"WN", "wn", {32, 64}, "columns of a warp tile (a multiple of the mma's 8)"},
      {"STAGES", "st", {3, 4}, "cp.async pipeline stages between global and shared memory"},
      {"SWIZZLE", "sw", {4}, "most tile columns a rasterization group spans (L2 reuse)"},
  };
  // Measured fastest of the 88 runnable configurations at 8192 (on an H100: 95.9 TFLOP/s). BK 32
  // ran slower at every tile, and ptxas put some of its 64×64 warp tiles in 32 registers with
  // kilobytes of spills, so the space keeps BK 64.
  f.classic = std::vector<int>{128, 256, 64, 64, 64, 4, 4};
  f.constraints = {
      {"mma_tiles_fit", "WM must be a multiple of 16, WN of 8 and BK of 16: warps compute whole m16n8k16 mma tiles",
       [](const Config& c) { return c["WM"] % 16 == 0 && c["WN"] % 8 == 0 && c["BK"] % 16 == 0; }},
      {"two_to_eight_warps", "(BM/WM)·(BN/WN) must be 2 to 8 warps",
       [](const Config& c) { return cutlassWarps(c) >= 2 && cutlassWarps(c) <= 8; }},
  };
  f.targetConstraints = {
      {"fp16_mma", "FP16 tensor-core mma with FP32 accumulation and cp.async need sm_80 or newer",
       [](const Config&, const GpuSpec& gpu) { return gpu.ccMajor >= 8; }},
  };
  // The GEMM copies 16 bytes of its FP16 operands at a time.
  addCutlassKernelTraits(f, kHalfsPerAccess, 2);
  f.extraKernels = [](const Config& c) {
    const std::string a = boolName(c.layout.transA), b = boolName(c.layout.transB);
    std::vector<std::string> kernels;
    for (const auto& [operand, trans] : {std::pair{std::string("true"), a}, std::pair{std::string("false"), b}})
      for (const char* pass : {"maxima", "scales", "split"})
        kernels.push_back(fmt::format("gemmtune_fp16x3_{}<{}, {}>", pass, operand, trans));
    kernels.push_back("gemmtune_fp16x3_unscale<" + a + ", " + b + ">");
    return kernels;
  };
  f.plan = fp16x3Plan;
  return f;
}

}  // namespace

GEMMTUNE_REGISTER_FAMILY(fp16x3Family)

}  // namespace gemmtune
