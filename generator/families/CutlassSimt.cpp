// Spec of templates/cutlass_simt.cu: CUTLASS's SIMT SGEMM (the design cuBLAS runs for FP32 on
// sm_80 and later) instantiated at run time. CUTLASS predicates every access, so one form runs
// any problem in any layout (nn, nt, tn, tt); the plan's grid follows CUTLASS's identity swizzle
// (the template checks it), its depth is batches × K slices (serial split-K, for shapes whose C
// has few tiles).
#include "../FamilyRegistry.hpp"

#include <fmt/format.h>

#include <limits>

namespace gemmtune {

namespace {


int warps(const Config& c) { return (c["BM"] / c["WM"]) * (c["BN"] / c["WN"]); }
int threads(const Config& c) { return 32 * warps(c); }

// log2 of the column group GemmIdentityThreadblockSwizzle<SWIZZLE>::get_log_tile picks for a row
// of `tilesN` tiles: the largest group its thresholds allow, so that few blocks idle.
int swizzleLogTile(int swizzle, long long tilesN) {
  if (swizzle >= 8 && tilesN >= 6) return 3;
  if (swizzle >= 4 && tilesN >= 3) return 2;
  if (swizzle >= 2 && tilesN >= 2) return 1;
  return 0;
}

LaunchPlan cutlassPlan(const Config& c, const GemmProblem& p) {
  if (std::string why = malformedProblem(p); !why.empty()) return LaunchPlan::refused(std::move(why));
  constexpr long long kIntMax = std::numeric_limits<int>::max();
  if (p.m > kIntMax || p.n > kIntMax || p.k > kIntMax || p.lda > kIntMax || p.ldb > kIntMax || p.ldc > kIntMax)
    return LaunchPlan::refused(fmt::format("{}: sizes and leading dimensions are passed as int", p.text()));
  if (p.alignA < 4 || p.alignB < 4 || p.alignC < 4)
    return LaunchPlan::refused(fmt::format("{}: A, B and C must be 4-byte aligned floats", p.text()));
  const long long tilesM = (p.m + c["BM"] - 1) / c["BM"], tilesN = (p.n + c["BN"] - 1) / c["BN"];
  const int log = swizzleLogTile(c["SWIZZLE"], tilesN);
  const long long gx = tilesM << log, gy = (tilesN + (1LL << log) - 1) >> log;
  if (gx > std::numeric_limits<unsigned>::max()) return LaunchPlan::refused(fmt::format("{}: too many row tiles", p.text()));
  if (gy > kMaxGridYZ)
    return LaunchPlan::refused(fmt::format("{}: {} column groups exceed the grid's {} in y", p.text(), gy, kMaxGridYZ));
  // Grid z holds every batch's K slices (the template reads slice z % slices of batch z / slices).
  const long long slices = c["SPLITK"], layers = p.batch * slices;
  if (layers > kMaxGridYZ)
    return LaunchPlan::refused(fmt::format("{}: {} batches x {} K slices exceed the grid's {} layers in z", p.text(),
                                           p.batch, slices, kMaxGridYZ));
  KernelLaunch k;
  k.grid = Dim3{static_cast<unsigned>(gx), static_cast<unsigned>(gy), static_cast<unsigned>(layers)};
  k.block = Dim3{static_cast<unsigned>(threads(c)), 1, 1};
  k.dynamicSmemBytes = c.family->dynamicSmemBytes(c);
  k.args = sgemmKernelArgs();
  k.args.push_back(KernelArg::Workspace);
  LaunchPlan plan;
  plan.launches.push_back(std::move(k));
  plan.tileM = c["BM"];
  plan.tileN = c["BN"];
  plan.kSlices = static_cast<int>(slices);
  // Serial split-K: one lock per C tile of each batch, batch b's at b·tiles_m·tiles_n, each
  // indexed by CUTLASS as tile_m + tile_n · tiles_m. Every launch leaves its locks at zero (the
  // last slice resets them), so a zeroed workspace stays usable; it must not be shared by
  // launches that run at the same time.
  if (slices > 1) plan.workspaceBytes = p.batch * tilesM * tilesN * static_cast<long long>(sizeof(int));
  return plan;
}

Family cutlassFamily() {
  Family f;
  f.name = "cutlass";
  f.templateFile = "cutlass_simt.cu";
  f.kernelName = "sgemm_cutlass_simt";
  f.headers = {"batch.cuh"};  // the batch argument every kernel takes
  f.description = "CUTLASS SIMT SGEMM through NVRTC: warp tiles of 8×8 per thread, cp.async multistage pipeline";
  f.order = 40;
  // The default domains follow CUTLASS's own SM80 SIMT list (BK 8, 4–8 warps, 3–5 stages). One
  // swizzle group: a CUTLASS instance takes 4–10 s to compile, and on an H100 both sizes' winners
  // (1024 and 4096) grouped 4 tile columns. BK 16 and swizzle 1, 2 or 8 are valid through --params.
  f.params = {
      {"BM", "bm", {32, 64, 128, 256}, "rows of the C tile per block (threadblock M)"},
      {"BN", "bn", {32, 64, 128, 256}, "columns of the C tile per block (threadblock N)"},
      {"BK", "bk", {8}, "depth of a k tile per pipeline stage (threadblock K)"},
      {"WM", "wm", {32, 64}, "rows of a warp tile"},
      {"WN", "wn", {32, 64}, "columns of a warp tile"},
      {"STAGES", "st", {3, 4, 5}, "cp.async pipeline stages between global and shared memory"},
      {"SWIZZLE", "sw", {4}, "most tile columns a rasterization group spans (L2 reuse)"},
      {"SPLITK", "sk", {1, 2, 4, 8}, "K slices (serial split-K: each slice adds its part into C in turn; one program for all)",
       /*launchOnly=*/true},
  };
  f.classic = std::vector<int>{128, 128, 8, 64, 32, 3, 1, 1};  // cuBLAS's FP32 design on sm_80+: 128×128×8, 3 stages
  f.constraints = {
      {"warp_tiles_fit", "WM must divide BM and WN must divide BN: the block is a grid of whole warp tiles",
       [](const Config& c) { return c["BM"] % c["WM"] == 0 && c["BN"] % c["WN"] == 0; }},
      {"four_to_eight_warps", "(BM/WM)·(BN/WN) must be 4 to 8 warps, the range of CUTLASS's SIMT kernel list",
       [](const Config& c) { return warps(c) >= 4 && warps(c) <= 8; }},
      {"at_most_four_warp_columns",
       "BN/WN must be at most 4: CUTLASS's SIMT list has no 1×8 warp arrangement, and on an H100 every one of them "
       "(32×256 with 32×32 warps, 64×256 with 64×32) computed wrong results at 1024 and 4096",
       [](const Config& c) { return c["BN"] / c["WN"] <= 4; }},
      {"tile_area", "BM·BN at most 256·128: larger tiles need more accumulators than a block has registers",
       [](const Config& c) { return c["BM"] * c["BN"] <= 256 * 128; }},
      {"whole_loads", "BM·BK and BK·BN must be multiples of the thread count: each thread copies whole elements per stage",
       [](const Config& c) { return (c["BM"] * c["BK"]) % threads(c) == 0 && (c["BK"] * c["BN"]) % threads(c) == 0; }},
      {"multistage", "STAGES must be 3 to 8: fewer selects CUTLASS's double-buffered main loop (padded shared memory)",
       [](const Config& c) { return c["STAGES"] >= 3 && c["STAGES"] <= 8; }},
      {"split_k_slices", "SPLITK must be 1 to 64 K slices: each slice past the first waits for the one before it",
       [](const Config& c) { return c["SPLITK"] >= 1 && c["SPLITK"] <= 64; }},
      {"swizzle_group", "SWIZZLE must be 1, 2, 4 or 8 (GemmIdentityThreadblockSwizzle's groups)",
       [](const Config& c) { return c["SWIZZLE"] == 1 || c["SWIZZLE"] == 2 || c["SWIZZLE"] == 4 || c["SWIZZLE"] == 8; }},
  };
  f.targetConstraints = {
      {"cp_async", "cp.async pipelines need sm_80 or newer",
       [](const Config&, const GpuSpec& gpu) { return gpu.ccMajor >= 8; }},
  };
  f.headerTrees = {"cutlass"};
  // CUTLASS declares its host-side classes (device::Gemm) without __host__; NVRTC compiles only
  // device code, so unannotated functions are taken as device functions.
  f.compileOptions = {"-default-device"};
  f.threadsPerBlock = threads;
  f.dynamicSmemBytes = [](const Config& c) { return c["STAGES"] * (c["BM"] + c["BN"]) * c["BK"] * 4; };
  f.staticSmemBytes = [](const Config&) { return 384; };  // GemmKernel::Params, built in shared memory
  f.plan = cutlassPlan;
  return f;
}

}  // namespace

GEMMTUNE_REGISTER_FAMILY(cutlassFamily)

}  // namespace gemmtune
