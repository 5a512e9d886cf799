#include "CutlassPlan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "Family.hpp"

namespace gemmtune {

namespace {

std::string vectorRefusal(const GemmProblem& p, int width) {
  if (width <= 1) return {};
  const int bytes = 4 * width;
  if (p.alignA < bytes || p.alignB < bytes || p.alignC < bytes)
    return fmt::format("{}: {}-float accesses need {}-byte aligned A, B and C", p.text(), width, bytes);
  if (p.lda % width || p.ldb % width || p.ldc % width)
    return fmt::format("{}: {}-float accesses need lda, ldb and ldc multiples of {}", p.text(), width, width);
  if (p.colsA() % width || p.colsB() % width || p.n % width)
    return fmt::format(
        "{}: {}-float accesses need the stored rows of A and B and C's row ({}, {}, {}) to be multiples "
        "of {}",
        p.text(), width, p.colsA(), p.colsB(), p.n, width);
  return {};
}

}  // namespace

int cutlassWarps(const Config& c) { return (c["BM"] / c["WM"]) * (c["BN"] / c["WN"]); }
int cutlassThreads(const Config& c) { return 32 * cutlassWarps(c); }

void addCutlassKernelTraits(Family& f, int elementsPerAccess, int elementBytes) {
  f.headers = {"cutlass_gemm.cuh", "batch.cuh"};  // the launch every device::Gemm family shares, the batch argument
  f.constraints.insert(
      f.constraints.begin(),
      {"warp_tiles_fit", "WM must divide BM and WN must divide BN: the block is a grid of whole warp tiles",
       [](const Config& c) { return c["BM"] % c["WM"] == 0 && c["BN"] % c["WN"] == 0; }});
  const std::string access = elementBytes == 4 ? fmt::format("{}-float", elementsPerAccess)
                                               : fmt::format("{}-byte", elementsPerAccess * elementBytes);
  std::vector<Constraint> shared{
      {"whole_loads",
       fmt::format("BM·BK and BK·BN must be multiples of {} × the thread count: each thread copies whole {} "
                   "accesses per stage",
                   elementsPerAccess, access),
       [elementsPerAccess](const Config& c) {
         const int perStage = elementsPerAccess * cutlassThreads(c);
         return (c["BM"] * c["BK"]) % perStage == 0 && (c["BK"] * c["BN"]) % perStage == 0;
       }},
      {"multistage", "STAGES must be 3 to 8: fewer selects CUTLASS's double-buffered main loop (padded shared memory)",
       [](const Config& c) { return c["STAGES"] >= 3 && c["STAGES"] <= 8; }},
  };
  const bool splitsK = std::any_of(f.params.begin(), f.params.end(), [](const ParamSpec& s) { return s.name == "SPLITK"; });
  if (splitsK)
    shared.push_back({"split_k_slices", "SPLITK must be 1 to 64 K slices: grid z holds every batch's slices",
                      [](const Config& c) { return c["SPLITK"] >= 1 && c["SPLITK"] <= 64; }});
  shared.push_back({"swizzle_group", "SWIZZLE must be 1, 2, 4 or 8 (GemmIdentityThreadblockSwizzle's groups)",
                    [](const Config& c) {
                      return c["SWIZZLE"] == 1 || c["SWIZZLE"] == 2 || c["SWIZZLE"] == 4 || c["SWIZZLE"] == 8;
                    }});
  f.constraints.insert(f.constraints.end(), shared.begin(), shared.end());
  f.headerTrees = {"cutlass"};
  // CUTLASS declares its host-side classes (device::Gemm) without __host__; NVRTC compiles only
  // device code, so unannotated functions are taken as device functions.
  f.compileOptions = {"-default-device"};
  f.threadsPerBlock = cutlassThreads;
  f.dynamicSmemBytes = [elementBytes](const Config& c) {
    return c["STAGES"] * (c["BM"] + c["BN"]) * c["BK"] * elementBytes;
  };
  f.staticSmemBytes = [](const Config&) { return 384; };  // GemmKernel::Params, built in shared memory
}

void addCutlassGemmTraits(Family& f, int vectorWidth) {
  addCutlassKernelTraits(f, vectorWidth, 4);
  // The guarded form reads one float at a time, for any problem.
  f.plan = [vectorWidth](const Config& c, const GemmProblem& p) {
    return cutlassGemmPlan(c, p, c.guarded ? 1 : vectorWidth);
  };
}

std::vector<Constraint> cutlassSimtWarpConstraints() {
  return {{"four_to_eight_warps", "(BM/WM)·(BN/WN) must be 4 to 8 warps, the range of CUTLASS's SIMT kernel list",
           [](const Config& c) { return cutlassWarps(c) >= 4 && cutlassWarps(c) <= 8; }},
          {"at_most_four_warp_columns",
           "BN/WN must be at most 4: CUTLASS's SIMT list has no 1×8 warp arrangement, and on an H100 every one of "
           "them (32×256 with 32×32 warps, 64×256 with 64×32) computed wrong results at 1024 and 4096",
           [](const Config& c) { return c["BN"] / c["WN"] <= 4; }}};
}

KernelLaunch cutlassLaunch(const Config& c, Dim3 grid) {
  KernelLaunch k;
  k.grid = grid;
  k.block = Dim3{static_cast<unsigned>(c.family->threadsPerBlock(c)), 1, 1};
  k.dynamicSmemBytes = c.family->dynamicSmemBytes(c);
  k.args = sgemmKernelArgs();
  k.args.push_back(KernelArg::Workspace);
  return k;
}

// log2 of the column group GemmIdentityThreadblockSwizzle<SWIZZLE>::get_log_tile picks for a row
// of `tilesN` tiles: the largest group its thresholds allow, so that few blocks idle.
int swizzleLogTile(int swizzle, long long tilesN) {
  if (swizzle >= 8 && tilesN >= 6) return 3;
  if (swizzle >= 4 && tilesN >= 3) return 2;
  if (swizzle >= 2 && tilesN >= 2) return 1;
  return 0;
}

CutlassGrid cutlassGrid(const Config& c, const GemmProblem& p, long long columns) {
  CutlassGrid g;
  g.tilesM = (p.m + c["BM"] - 1) / c["BM"], g.tilesN = (columns + c["BN"] - 1) / c["BN"];
  const int log = swizzleLogTile(c["SWIZZLE"], g.tilesN);
  const long long gx = g.tilesM << log, gy = (g.tilesN + (1LL << log) - 1) >> log;
  if (gx > std::numeric_limits<unsigned>::max())
    g.refusal = fmt::format("{}: too many row tiles", p.text());
  else if (gy > kMaxGridYZ)
    g.refusal = fmt::format("{}: {} column groups exceed the grid's {} in y", p.text(), gy, kMaxGridYZ);
  else
    g.x = static_cast<unsigned>(gx), g.y = static_cast<unsigned>(gy);
  return g;
}

std::string cutlassProblemRefusal(const GemmProblem& p) {
  if (std::string why = malformedProblem(p); !why.empty()) return why;
  constexpr long long kIntMax = std::numeric_limits<int>::max();
  if (p.m > kIntMax || p.n > kIntMax || p.k > kIntMax || p.lda > kIntMax || p.ldb > kIntMax || p.ldc > kIntMax ||
      p.batch > kIntMax)
    return fmt::format("{}: sizes, leading dimensions and the batch count are passed as int", p.text());
  if (p.alignA < 4 || p.alignB < 4 || p.alignC < 4) return fmt::format("{}: A, B and C must be 4-byte aligned floats", p.text());
  return {};
}

LaunchPlan cutlassGemmPlan(const Config& c, const GemmProblem& p, int vectorWidth, bool slicesSummedOnChip) {
  if (std::string why = cutlassProblemRefusal(p); !why.empty()) return LaunchPlan::refused(std::move(why));
  if (std::string why = vectorRefusal(p, vectorWidth); !why.empty()) return LaunchPlan::refused(std::move(why));
  const CutlassGrid tiles = cutlassGrid(c, p, p.n);
  if (!tiles.refusal.empty()) return LaunchPlan::refused(tiles.refusal);
  const long long tilesM = tiles.tilesM, tilesN = tiles.tilesN;
  // Grid z holds every batch's K slices (the template reads slice z % slices of batch z / slices).
  const long long slices = c["SPLITK"], layers = p.batch * slices;
  if (layers > kMaxGridYZ)
    return LaunchPlan::refused(fmt::format("{}: {} batches x {} K slices exceed the grid's {} layers in z", p.text(),
                                           p.batch, slices, kMaxGridYZ));
  LaunchPlan plan;
  plan.launches.push_back(cutlassLaunch(c, Dim3{tiles.x, tiles.y, static_cast<unsigned>(layers)}));
  plan.tileM = c["BM"];
  plan.tileN = c["BN"];
  plan.tileK = c["BK"];
  plan.kSlices = static_cast<int>(slices);
  plan.slicesSummedOnChip = slicesSummedOnChip;
  // Serial split-K: one lock per C tile of each batch, batch b's at b·tiles_m·tiles_n, each
  // indexed by CUTLASS as tile_m + tile_n · tiles_m. Every launch leaves its locks at zero (the
  // last slice resets them), so a zeroed workspace stays usable; it must not be shared by
  // launches that run at the same time.
  if (slices > 1 && !slicesSummedOnChip) {
    plan.workspaceBytes = p.batch * tilesM * tilesN * static_cast<long long>(sizeof(int));
    if (plan.workspaceBytes > kZeroedWorkspaceBytes)  // the locks must lie in the workspace's zeroed part
      return LaunchPlan::refused(fmt::format("{}: {} batches of {} tiles need more split-K locks than fit in {} MiB",
                                             p.text(), p.batch, tilesM * tilesN, kZeroedWorkspaceBytes >> 20));
  }
  return plan;
}

}  // namespace gemmtune
