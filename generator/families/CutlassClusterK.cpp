// Spec of templates/cutlass_clusterk.cu: CUTLASS's SIMT main loop with K split over the blocks of
// a thread block cluster, the slices' partial tiles reduced through distributed shared memory
// (sm_90 and later). One form runs any problem in any layout, as `cutlass`; the grid is
// `cutlass`'s, its depth batches × SPLITK, each cluster one C tile's slices.
#include <algorithm>

#include "../CutlassPlan.hpp"
#include "../FamilyRegistry.hpp"

namespace gemmtune {

namespace {

Family clusterKFamily() {
  Family f;
  f.name = "clusterk";
  f.templateFile = "cutlass_clusterk.cu";
  f.kernelName = "sgemm_cutlass_clusterk";
  f.description =
      "CUTLASS SIMT main loop, K split over a thread block cluster, the slices summed through distributed shared "
      "memory (Hopper)";
  f.order = 45;
  // The tiles that fill an H100 with few C tiles. SPLITK is a template argument here: the
  // cluster's size is compiled into the kernel. Two slices by default: measured on an H100 at
  // 1024³, the best 4-slice cluster ran at 29 TFLOP/s against 38 for 2 slices, and 128×256 in
  // 4 slices (cuBLAS's own tile and split there) took 102 µs against cuBLAS's 57: a cluster's blocks must be
  // resident in one GPC at once, and too few clusters of 4 one-block-per-SM tiles fit the GPU.
  // One stage count: 3 and 4 stages ran within 1 % of each other there in every layout (3 ahead in
  // nt and tn), and each program costs the main job seconds of CUTLASS compilation; 4 or 5 through
  // --params.
  f.params = {
      {"BM", "bm", {64, 128, 256}, "rows of the C tile per block (threadblock M)"},
      {"BN", "bn", {64, 128, 256}, "columns of the C tile per block (threadblock N)"},
      {"BK", "bk", {8}, "depth of a k tile per pipeline stage (threadblock K)"},
      {"WM", "wm", {32, 64}, "rows of a warp tile"},
      {"WN", "wn", {32, 64}, "columns of a warp tile"},
      {"STAGES", "st", {3}, "cp.async pipeline stages between global and shared memory"},
      {"SWIZZLE", "sw", {4}, "most tile columns a rasterization group spans (L2 reuse)"},
      {"SPLITK", "sk", {2}, "K slices: the blocks of one cluster, their partial tiles summed in shared memory"},
  };
  f.constraints = cutlassSimtWarpConstraints();
  f.constraints.insert(f.constraints.end(), {
      {"tile_area", "BM·BN at most 256·128: larger tiles need more accumulators than a block has registers",
       [](const Config& c) { return c["BM"] * c["BN"] <= 256 * 128; }},
      {"large_tiles",
       "BM·BN at least 128·128: smaller tiles fill the GPU with more blocks instead of a cluster's slices (and "
       "cutlass and thin split K for them); measured on an H100 at 1024³, none came within 3 % of the best",
       [](const Config& c) { return c["BM"] * c["BN"] >= 128 * 128; }},
      {"cluster_slices", "SPLITK must be 2 to 8 (a portable cluster) and divide BM: each slice sums a band of rows",
       [](const Config& c) { return c["SPLITK"] >= 2 && c["SPLITK"] <= 8 && c["BM"] % c["SPLITK"] == 0; }},
  });
  f.targetConstraints = {
      {"clusters", "thread block clusters and distributed shared memory need sm_90 or newer",
       [](const Config&, const GpuSpec& gpu) { return gpu.ccMajor >= 9; }},
  };
  addCutlassGemmTraits(f, /*vectorWidth=*/1);
  // The pipeline's shared memory holds the partial tile (rows padded by 4 floats) after the main loop.
  f.dynamicSmemBytes = [](const Config& c) {
    return std::max(c["STAGES"] * (c["BM"] + c["BN"]) * c["BK"] * 4, c["BM"] * (c["BN"] + 4) * 4);
  };
  f.plan = [](const Config& c, const GemmProblem& p) {
    return cutlassGemmPlan(c, p, 1, /*slicesSummedOnChip=*/true);  // the cluster sums its slices itself
  };
  return f;
}

}  // namespace

GEMMTUNE_REGISTER_FAMILY(clusterKFamily)

}  // namespace gemmtune
