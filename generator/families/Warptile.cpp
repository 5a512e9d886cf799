// Spec of templates/warptile.cu: a BM×BN tile of C per block, one WM×WN warp tile per warp split
// into WMITER×WNITER sub-tiles, TM×TN results per thread in each; A and B k-major in shared memory
// whatever the layout, float4 loads and stores in the unguarded form, shared memory and fragments
// double-buffered; any layout, batches in grid z.
#include "../FamilyRegistry.hpp"

#include <algorithm>

namespace gemmtune {

namespace {

int wmiter(const Config& c) { return c["WM"] * c["WN"] / (32 * c["TM"] * c["TN"] * c["WNITER"]); }

// ptxas needs about this many registers per thread: accumulators, two fragment buffers, the
// global-to-shared staging registers and ~20 for addresses (fitted to the compiled kernels).
int estimatedRegisters(const Config& c) {
  const int threads = c["THREADS"], results = wmiter(c) * c["TM"] * c["WNITER"] * c["TN"];
  const int staging = (c["BM"] * c["BK"] / 4 + threads - 1) / threads + (c["BK"] * c["BN"] / 4 + threads - 1) / threads;
  return results + 2 * (wmiter(c) * c["TM"] + c["WNITER"] * c["TN"]) + 4 * staging + 20;
}

}  // namespace

// Floats of one k tile in shared memory (templates/warp_tile.cuh): A in BK rows of BM + 4, B in BK
// rows of BN, or of BN + 4 where B is stored with k contiguous (op(B) = T, copied like A).
int warptileStageFloats(const Config& c) { return c["BK"] * (c["BM"] + 4 + c["BN"] + (c.layout.transB ? 4 : 0)); }

// Not file-local: warppipe (Warppipe.cpp) is this family with a cp.async pipeline and builds on
// its parameters and constraints.
Family warptileFamily() {
  Family f;
  f.name = "warptile";
  f.templateFile = "warptile.cu";
  f.headers = {"warp_tile.cuh", "batch.cuh"};  // the warp tiling (shared with warppipe), the batch argument
  f.kernelName = "sgemm_warptile";
  f.description = "warp-tiled SGEMM: warp tiles of TM×TN fragments, A transposed in shared memory, float4 loads";
  f.order = 30;
  // The default domains keep a cold tune of every family within minutes; wider values (BM, BN
  // 256; WM, WN 128; WNITER 4; THREADS 64 or 512) are valid and reachable through --params.
  f.params = {
      {"BM", "bm", {64, 128}, "rows of the C tile per block"},
      {"BN", "bn", {64, 128}, "columns of the C tile per block"},
      {"BK", "bk", {8, 16}, "depth of a k tile in shared memory"},
      {"WM", "wm", {32, 64}, "rows of a warp tile"},
      {"WN", "wn", {32, 64}, "columns of a warp tile"},
      {"WNITER", "wni", {1, 2}, "sub-tiles across a warp tile's columns"},
      {"TM", "tm", {4, 8}, "rows per thread in each sub-tile"},
      {"TN", "tn", {4, 8}, "columns per thread in each sub-tile"},
      {"THREADS", "t", {128, 256}, "threads per block"},
  };
  f.classic = std::vector<int>{128, 128, 8, 64, 32, 2, 4, 4, 256};  // the public warp-tiling kernel's shape
  f.constraints = {
      {"whole_warps", "THREADS must be a multiple of 32 between 32 and 1024: warps are the unit of work",
       [](const Config& c) { return c["THREADS"] % 32 == 0 && c["THREADS"] >= 32 && c["THREADS"] <= 1024; }},
      {"float4_fragments", "TM and TN must be multiples of 4: fragments are read, and C stored, as float4",
       [](const Config& c) { return c["TM"] % 4 == 0 && c["TN"] % 4 == 0; }},
      {"float4_k", "BK must be a multiple of 4: A is loaded as float4 along k",
       [](const Config& c) { return c["BK"] % 4 == 0; }},
      {"warp_tiles_fit", "warp tiles must tile the block tile exactly: WM | BM and WN | BN",
       [](const Config& c) { return c["BM"] % c["WM"] == 0 && c["BN"] % c["WN"] == 0; }},
      {"one_tile_per_warp", "(BM/WM)·(BN/WN) must equal THREADS/32: each warp owns exactly one warp tile",
       [](const Config& c) { return (c["BM"] / c["WM"]) * (c["BN"] / c["WN"]) == c["THREADS"] / 32; }},
      {"whole_wmiter", "WM·WN must be a multiple of 32·TM·TN·WNITER, so WMITER is a whole number ≥ 1",
       [](const Config& c) {
         return c["WM"] * c["WN"] % (32 * c["TM"] * c["TN"] * c["WNITER"]) == 0 && wmiter(c) >= 1;
       }},
      {"whole_subtiles", "WMITER must divide WM and WNITER must divide WN: sub-tile edges are whole",
       [](const Config& c) { return c["WM"] % wmiter(c) == 0 && c["WN"] % c["WNITER"] == 0; }},
      {"lanes_cover_subtile", "TM | WM/WMITER, TN | WN/WNITER and (WSUBM/TM)·(WSUBN/TN) == 32: the lanes cover a sub-tile",
       [](const Config& c) {
         const int wsubm = c["WM"] / wmiter(c), wsubn = c["WN"] / c["WNITER"];
         return wsubm % c["TM"] == 0 && wsubn % c["TN"] == 0 && (wsubm / c["TM"]) * (wsubn / c["TN"]) == 32;
       }},
  };
  f.targetConstraints = {
      {"register_estimate",
       "the estimated registers per thread must fit the GPU's per-thread and per-block limits, or ptxas spills heavily",
       [](const Config& c, const GpuSpec& gpu) {
         return estimatedRegisters(c) <= std::min(gpu.maxRegsPerThread, gpu.regsPerBlock / c["THREADS"]);
       }},
  };
  f.threadsPerBlock = [](const Config& c) { return c["THREADS"]; };
  f.dynamicSmemBytes = [](const Config& c) { return 2 * warptileStageFloats(c) * 4; };
  f.staticSmemBytes = [](const Config&) { return 0; };
  f.plan = [](const Config& c, const GemmProblem& p) { return tiledPlan(c, p, {c["BM"], c["BN"], c["BK"], 4}); };
  return f;
}

GEMMTUNE_REGISTER_FAMILY(warptileFamily)

}  // namespace gemmtune
