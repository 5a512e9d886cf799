// Spec of templates/thin.cu: small C tiles (8 to 128 on a side) for shapes where M or N is small
// or C has few tiles; a cp.async pipeline of STAGES k tiles; K split across blocks (SPLITK, a
// launch-only parameter: the last block of a tile adds the slices' partial sums in slice order,
// so results are the same bits run to run).
#include "../FamilyRegistry.hpp"

#include <fmt/format.h>

#include <string>
#include <utility>

namespace gemmtune {

namespace {

int threads(const Config& c) { return (c["BM"] / c["TM"]) * (c["BN"] / c["TN"]); }

// Row stride (floats) of B's tile in shared memory: BN, or for op(B) = T templates/thin.cu's
// gemmtune_thin_stride_b (the same formula: the launch's shared memory must hold what the
// template indexes).
int strideB(const Config& c) {
  const int bn = c["BN"];
  if (!c.layout.transB) return bn;
  return (bn / 4) % 2 == 0 ? bn + 4 : bn + 8;
}

// Partial sums are worth their memory only where C has few tiles; beyond this a plan refuses a
// split (the library allocates a plan's workspace per context and stream).
constexpr long long kMaxWorkspaceBytes = kZeroedWorkspaceBytes;  // counters must stay in the zeroed part

LaunchPlan thinPlan(const Config& c, const GemmProblem& p) {
  LaunchPlan plan = tiledPlan(c, p, {c["BM"], c["BN"], c["BK"], 4});
  if (!plan.runnable()) return plan;
  KernelLaunch& k = plan.launches.front();
  // Row tiles on x (up to 2^31 - 1 of them; y stops at 65535): a skinny C has many rows of tiles.
  std::swap(k.grid.x, k.grid.y);
  // Grid z holds every batch's K slices, batch-major (the template derives both from it).
  const int slices = c["SPLITK"];
  const long long layers = p.batch * slices;
  if (layers > kMaxGridYZ)
    return LaunchPlan::refused(fmt::format("{}: {} batches of {} K slices need {} grid layers (at most {} in one launch)",
                                           p.text(), p.batch, slices, layers, kMaxGridYZ));
  k.grid.z = static_cast<unsigned>(layers);
  k.args.push_back(KernelArg::Workspace);
  plan.kSlices = slices;
  if (slices > 1) {
    // Each batch has its own counters and partial sums, one region after another.
    const long long tiles = static_cast<long long>(k.grid.x) * k.grid.y;
    const long long bytes = p.batch * 4 * ((tiles + 63) / 64 * 64 + slices * tiles * c["BM"] * c["BN"]);
    if (bytes > kMaxWorkspaceBytes) {
      const std::string batches = p.batch > 1 ? fmt::format("{} batches of ", p.batch) : "";
      return LaunchPlan::refused(fmt::format("{}: {}{} K slices of {} tiles need {} MiB of partial sums (at most {} MiB: "
                                             "split K where C has few tiles)",
                                             p.text(), batches, slices, tiles, (bytes + (1 << 20) - 1) >> 20,
                                             kMaxWorkspaceBytes >> 20));
    }
    plan.workspaceBytes = bytes;
  }
  return plan;
}

Family thinFamily() {
  Family f;
  f.name = "thin";
  f.templateFile = "thin.cu";
  f.headers = {"cp_async.cuh", "batch.cuh"};  // the cp.async copies (shared with warppipe), the batch argument
  f.kernelName = "sgemm_thin";
  f.description = "small C tiles for skinny shapes (M or N small, down to GEMV) with K split across blocks";
  f.order = 35;
  // Tiles from 8×128 to 128×8: N ≤ 32 wants BN 8–32 with many row tiles, M ≤ 32 the mirror.
  // BK 32: every row of an A tile is one 128-byte line. BK 16, TN 8 and 16 or 32 slices are valid
  // through --params.
  f.params = {
      {"BM", "bm", {8, 16, 32, 64, 128}, "rows of the C tile per block"},
      {"BN", "bn", {8, 16, 32, 64, 128}, "columns of the C tile per block"},
      {"BK", "bk", {32}, "depth of the A and B tiles in shared memory"},
      {"TM", "tm", {1, 2, 4, 8}, "rows of C per thread"},
      {"TN", "tn", {1, 2, 4}, "columns of C per thread"},
      {"STAGES", "st", {2, 4}, "k tiles in flight in the cp.async pipeline from global to shared memory"},
      {"SPLITK", "sk", {1, 2, 4, 8, 16},
       "K slices (each block multiplies one; the last of a tile adds the partial sums in order; one program for all)",
       /*launchOnly=*/true},
  };
  f.classic = std::vector<int>{64, 16, 32, 4, 4, 4, 4};  // 64 threads, 4 stages, 4 K slices: N ≤ 16 over a long K
  // Measured on an H100 (every tile up to 64×64 with 4 stages at 12 shapes with M or N ≤ 24, each at its
  // best slice count): 8×32, 16×16 and 32×16 with 2×2 per thread ran at 1.19×, 1.18× and 1.04× cuBLAS
  // (geometric means); 32×64 and 64×64 with 4×4 per thread, the tiles square sizes pick, at 0.63× and 0.55×.
  f.skinnyTiles = {{8, 32, 32, 2, 2, 4, 1}, {16, 16, 32, 2, 2, 4, 1}, {32, 16, 32, 2, 2, 4, 1}};
  f.constraints = {
      {"sub_tiles_fit", "TM must divide BM and TN must divide BN: each thread owns a whole sub-tile",
       [](const Config& c) { return c["BM"] % c["TM"] == 0 && c["BN"] % c["TN"] == 0; }},
      {"b_fragments", "TN must be 1, 2 or a multiple of 4: B fragments are read as one float, a float2 or float4s",
       [](const Config& c) { return c["TN"] == 1 || c["TN"] == 2 || c["TN"] % 4 == 0; }},
      {"float4_columns", "BN must be a multiple of 4: B is loaded as float4 along n",
       [](const Config& c) { return c["BN"] % 4 == 0; }},
      {"float4_k", "BK must be a multiple of 4: A is read four k steps at a time",
       [](const Config& c) { return c["BK"] % 4 == 0 && c["BK"] >= 4; }},
      {"two_to_eight_warps", "(BM/TM)·(BN/TN) threads must be 2 to 8 whole warps: small tiles, many blocks per SM",
       [](const Config& c) { return threads(c) % 32 == 0 && threads(c) >= 64 && threads(c) <= 256; }},
      {"small_tiles", "BM·BN at most 64·64: larger tiles are the ground of warptile and cutlass",
       [](const Config& c) { return c["BM"] * c["BN"] <= 64 * 64; }},
      {"results_per_thread", "TM·TN must be 4 to 16: fewer starve the FMA pipe on shared-memory reads, more starve the SMs of blocks",
       [](const Config& c) { return c["TM"] * c["TN"] >= 4 && c["TM"] * c["TN"] <= 16; }},
      {"pipeline_stages", "STAGES must be 2 to 8: one k tile lands while another is multiplied; more only cost shared memory",
       [](const Config& c) { return c["STAGES"] >= 2 && c["STAGES"] <= 8; }},
      {"split_k_slices", "SPLITK must be 1 to 64 K slices: more partial sums cost more than they save",
       [](const Config& c) { return c["SPLITK"] >= 1 && c["SPLITK"] <= 64; }},
  };
  f.targetConstraints = {
      {"cp_async", "cp.async pipelines need sm_80 or newer", [](const Config&, const GpuSpec& gpu) { return gpu.ccMajor >= 8; }},
  };
  f.threadsPerBlock = threads;
  // STAGES buffers of A (BM rows of BK + 4) and B (BK rows of strideB), then the split-K "last block" flag.
  f.dynamicSmemBytes = [](const Config& c) { return c["STAGES"] * (c["BM"] * (c["BK"] + 4) + c["BK"] * strideB(c)) * 4 + 16; };
  f.staticSmemBytes = [](const Config&) { return 0; };
  f.plan = thinPlan;
  return f;
}

}  // namespace

GEMMTUNE_REGISTER_FAMILY(thinFamily)

}  // namespace gemmtune
