// Spec of templates/cutlass_fp16x3.cu: FP32 GEMM at FP32 accuracy on FP16 tensor cores — each row of
// op(A) and column of op(B) scaled by a power of two and split into two FP16 parts, three FP16
// products accumulated in FP32 by CUTLASS 2.x's tensor-op GEMM, every mma restarted from zero and
// added into the accumulators, then unscaled. Precision class `faithful`. Eight launches (three passes per operand, the GEMM, unscale) through
// the workspace past its zeroed prefix (generator/Fp16x3Plan.hpp); batches in grid z; any layout; M, N, K
// within the plan's limits (int sizes, 16 GiB of scratch, K below 2^22 for the split's grid).
#include <fmt/format.h>

#include <string>
#include <vector>

#include "../CutlassPlan.hpp"
#include "../Fp16x3Plan.hpp"
#include "../FamilyRegistry.hpp"

namespace gemmtune {

namespace {

constexpr int kHalfsPerAccess = 8;

// CUTLASS's swizzled grid over the product's Np columns.
Fp16x3Grid swizzledGrid(const Config& c, const GemmProblem& p, long long np) {
  const CutlassGrid tiles = cutlassGrid(c, p, np);
  return {Dim3{tiles.x, tiles.y, 1}, tiles.refusal};
}

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
  f.headers.push_back("fp16x3_passes.cuh");
  f.extraKernels = fp16x3PassKernels;
  f.plan = [](const Config& c, const GemmProblem& p) { return fp16x3Plan(c, p, swizzledGrid); };
  return f;
}

}  // namespace

GEMMTUNE_REGISTER_FAMILY(fp16x3Family)

}  // namespace gemmtune
