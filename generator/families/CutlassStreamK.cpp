// Spec of templates/cutlass_streamk.cu: CUTLASS's SIMT main loop with every block of one wave
// given the same share of all tiles' k steps (stream-K), a tile split between blocks summed through
// the workspace by the block that holds its first k steps. One form runs any problem in any
// layout and batch, as `cutlass`; the grid is one wave (KernelLaunch::oneWave), so no C shape
// leaves the last wave of tiles part empty.
#include <fmt/format.h>

#include <algorithm>

#include "../CutlassPlan.hpp"
#include "../FamilyRegistry.hpp"

namespace gemmtune {

namespace {

// The most blocks a launch may have: the workspace holds this many flags and partial tiles (the
// template's GEMMTUNE_STREAMK_MAX_BLOCKS). One wave of a 132-SM H100 at 3 blocks per SM is 396.
constexpr long long kStreamKMaxBlocks = 512;

LaunchPlan streamKPlan(const Config& c, const GemmProblem& p) {
  if (std::string why = cutlassProblemRefusal(p); !why.empty()) return LaunchPlan::refused(std::move(why));
  const long long tiles = ((p.m + c["BM"] - 1) / c["BM"]) * ((p.n + c["BN"] - 1) / c["BN"]) * p.batch;
  const long long steps = tiles * ((p.k + c["BK"] - 1) / c["BK"]);
  KernelLaunch k = cutlassLaunch(c, Dim3{static_cast<unsigned>(std::min(steps, kStreamKMaxBlocks)), 1, 1});
  k.oneWave = true;
  LaunchPlan plan;
  plan.launches.push_back(std::move(k));
  plan.tileM = c["BM"];
  plan.tileN = c["BN"];
  plan.tileK = c["BK"];
  // The flags in the zeroed part, a partial tile per block past it (scratch).
  plan.workspaceBytes = kZeroedWorkspaceBytes + kStreamKMaxBlocks * c["BM"] * c["BN"] * 4LL;
  return plan;
}

Family streamKFamily() {
  Family f;
  f.name = "streamk";
  f.templateFile = "cutlass_streamk.cu";
  f.kernelName = "sgemm_cutlass_streamk";
  f.description =
      "CUTLASS SIMT main loop, one wave of blocks sharing all tiles' k steps evenly (stream-K), split tiles summed "
      "through the workspace";
  f.order = 44;  // before clusterk: the basis times families in this order within a shape's share
  // Four programs by default (each costs the main job seconds of CUTLASS compilation): tiles of
  // 128×128's area with 4 or 8 warps of 64 columns, one stage count and one swizzle group.
  // Measured on an H200 at 1024³ and 7 mid-size shapes in a 10-program space, they
  // held every shape's fastest but two (128×256 at 1736×1236×1643 and 4000×3093×3164, within 2 %).
  // 256×64, other stages, swizzles and warps through --params.
  f.params = {
      {"BM", "bm", {64, 128, 256}, "rows of the C tile per block (threadblock M)"},
      {"BN", "bn", {128, 256}, "columns of the C tile per block (threadblock N)"},
      {"BK", "bk", {8}, "depth of a k tile per pipeline stage (threadblock K): one step of stream-K's share"},
      {"WM", "wm", {32, 64}, "rows of a warp tile"},
      {"WN", "wn", {64}, "columns of a warp tile"},
      {"STAGES", "st", {3}, "cp.async pipeline stages between global and shared memory"},
      {"SWIZZLE", "sw", {4}, "tile columns in one group of the tile order (L2 reuse)"},
  };
  f.constraints = cutlassSimtWarpConstraints();
  f.constraints.insert(f.constraints.end(), {
      {"tile_area_16k",
       "BM·BN must be 128·128: stream-K fills the GPU with any tile, and in a wider space (measured on an H200) "
       "no other area was fastest by more than 2 %",
       [](const Config& c) { return c["BM"] * c["BN"] == 128 * 128; }},
  });
  f.targetConstraints = {
      {"cp_async", "cp.async pipelines need sm_80 or newer",
       [](const Config&, const GpuSpec& gpu) { return gpu.ccMajor >= 8; }},
  };
  addCutlassGemmTraits(f, /*vectorWidth=*/1);
  // The pipeline's shared memory holds the tile (rows padded by 4 floats) after each segment's loop.
  f.dynamicSmemBytes = [](const Config& c) {
    return std::max(c["STAGES"] * (c["BM"] + c["BN"]) * c["BK"] * 4, c["BM"] * (c["BN"] + 4) * 4);
  };
  f.plan = streamKPlan;
  return f;
}

}  // namespace

GEMMTUNE_REGISTER_FAMILY(streamKFamily)

}  // namespace gemmtune
