// Spec of templates/wgmma_fp16x3.cu: FP32 GEMM at FP32 accuracy on Hopper's FP16 wgmma — the
// fp16x3 passes (rows of op(A) and columns of op(B) scaled by powers of two, split into two FP16
// parts, unscaled after; generator/Fp16x3Plan.hpp) around a GEMM of our own on wgmma.mma_async,
// whose chains of tensor-core accumulation restart from zero every RESTART k tiles and are added
// in FP32. Precision class `faithful`; compiled for sm_90a only (wgmma exists on no other GPU).
#include <fmt/format.h>

#include <limits>
#include <string>
#include <vector>

#include "../FamilyRegistry.hpp"
#include "../Fp16x3Plan.hpp"

namespace gemmtune {

namespace {

constexpr int kThreads = 256;  // two warpgroups

int subTiles(const Config& c) { return (c["BM"] / 128) * (c["BN"] / c["SN"]); }

// Stages of (BM + BN) rows × 64 k of FP16, and 1024 bytes to align them (the swizzle's period).
int stagesBytes(const Config& c) { return c["STAGES"] * (c["BM"] + c["BN"]) * 128 + 1024; }

// One block per BM × BN tile in x (the template walks them in groups of GROUP tile rows).
Fp16x3Grid tileGrid(const Config& c, const GemmProblem& p, long long np) {
  const long long tiles = (p.m + c["BM"] - 1) / c["BM"] * ((np + c["BN"] - 1) / c["BN"]);  // int sizes: no overflow
  if (tiles > std::numeric_limits<int>::max())
    return {Dim3{}, fmt::format("{}: {} tiles of {}×{} exceed the grid's x", p.text(), tiles, c["BM"], c["BN"])};
  return {Dim3{static_cast<unsigned>(tiles), 1, 1}, ""};
}

Family wgmmaFamily() {
  Family f;
  f.name = "wgmmafp16x3";
  f.templateFile = "wgmma_fp16x3.cu";
  f.kernelName = "sgemm_wgmma_fp16x3";
  f.description = "FP32 on Hopper's FP16 wgmma at FP32 accuracy: fp16x3's split and scaling around a GEMM whose "
                  "tensor-core sums restart from zero every RESTART k tiles and are added in FP32 (sm_90a)";
  f.precision = PrecisionClass::faithful;
  f.order = 56;
  f.onlyArch = "sm_90a";
  f.params = {
      {"BM", "bm", {128, 256}, "rows of the C tile per block (two warpgroups of BM/2 rows)"},
      {"BN", "bn", {128, 256}, "columns of the C tile per block"},
      {"SN", "sn", {64, 128}, "columns of one wgmma (64 × SN × 16): a warpgroup's sub-tile"},
      {"STAGES", "st", {3, 4, 5, 6}, "shared-memory stages of 64 k (cp.async runs STAGES − 2 ahead)"},
      {"RESTART", "rs", {1, 2, 4}, "k tiles of 64 a chain accumulates on the tensor cores before its FP32 add"},
      {"GROUP", "gr", {8}, "tile rows walked together (L2 reuse)"},
  };
  f.classic = std::vector<int>{128, 256, 64, 4, 1, 8};
  f.constraints = {
      {"wgmma_shapes", "BM must be a multiple of 128 (two warpgroups of whole 64-row wgmmas) and SN 64 or 128",
       [](const Config& c) { return c["BM"] % 128 == 0 && (c["SN"] == 64 || c["SN"] == 128); }},
      {"registers", "BM·BN/256 accumulators and two temporary sets of SN/2 must fit in 192 registers a thread",
       [](const Config& c) { return c["BM"] * c["BN"] / 256 + c["SN"] <= 192; }},
      {"sub_tiles", "BN must be a multiple of SN, and a warpgroup holds one sub-tile or an even number",
       [](const Config& c) { return c["BN"] % c["SN"] == 0 && (subTiles(c) == 1 || subTiles(c) % 2 == 0); }},
      {"restart_one_sub_tile", "RESTART > 1 needs one sub-tile per warpgroup (BM 128, SN = BN)",
       [](const Config& c) { return c["RESTART"] == 1 || subTiles(c) == 1; }},
      {"stages", "STAGES >= 3: loads run STAGES − 2 k tiles ahead of the wgmmas",
       [](const Config& c) { return c["STAGES"] >= 3; }},
  };
  f.targetConstraints = {
      {"wgmma", "wgmma needs an sm_90 GPU (Hopper); its code is compiled for sm_90a and runs there only",
       [](const Config& c, const GpuSpec& gpu) { return c.family->runsOn(gpu.arch()); }},
  };
  f.headers = {"fp16x3_passes.cuh", "batch.cuh"};
  f.threadsPerBlock = [](const Config&) { return kThreads; };
  f.dynamicSmemBytes = stagesBytes;
  f.staticSmemBytes = [](const Config&) { return 0; };
  f.extraKernels = fp16x3PassKernels;
  f.plan = [](const Config& c, const GemmProblem& p) { return fp16x3Plan(c, p, tileGrid); };
  return f;
}

}  // namespace

GEMMTUNE_REGISTER_FAMILY(wgmmaFamily)

}  // namespace gemmtune
