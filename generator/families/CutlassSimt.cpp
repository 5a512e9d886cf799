// Spec of templates/cutlass_simt.cu: CUTLASS's SIMT SGEMM (the design cuBLAS runs for FP32 on
// sm_80 and later) instantiated at run time. CUTLASS predicates every access, so one form runs
// any problem in any layout (nn, nt, tn, tt); the plan's grid follows CUTLASS's identity swizzle
// (the template checks it), its depth is batches × K slices (serial split-K, for shapes whose C
// has few tiles).
#include "../CutlassPlan.hpp"
#include "../FamilyRegistry.hpp"

namespace gemmtune {

namespace {

Family cutlassFamily() {
  Family f;
  f.name = "cutlass";
  f.templateFile = "cutlass_simt.cu";
  f.kernelName = "sgemm_cutlass_simt";
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
  f.constraints = cutlassSimtWarpConstraints();
  f.constraints.insert(f.constraints.end(), {
      {"tile_area", "BM·BN at most 256·128: larger tiles need more accumulators than a block has registers",
       [](const Config& c) { return c["BM"] * c["BN"] <= 256 * 128; }},
  });
  f.targetConstraints = {
      {"cp_async", "cp.async pipelines need sm_80 or newer",
       [](const Config&, const GpuSpec& gpu) { return gpu.ccMajor >= 8; }},
  };
  addCutlassGemmTraits(f, /*vectorWidth=*/1);  // one float per access: any problem, guarded or not
  return f;
}

}  // namespace

GEMMTUNE_REGISTER_FAMILY(cutlassFamily)

}  // namespace gemmtune
