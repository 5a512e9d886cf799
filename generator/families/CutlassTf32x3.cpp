// Spec of templates/cutlass_tf32x3.cu: FP32 GEMM on tensor cores at FP32 accuracy — CUTLASS 2.x's
// tensor-op GEMM with OpMultiplyAddFastF32 (three TF32 products per multiply-add, the operands
// split into big and small TF32 parts) — instantiated at run time. Precision class `faithful`:
// tuned only with `tune --precision faithful`, served only to callers that allow it. The launch
// is the SIMT cutlass family's (generator/CutlassPlan): any layout, batches × K slices in grid z.
// The unguarded form reads 4 floats at a time; the guarded form one, for any problem.
#include "../CutlassPlan.hpp"
#include "../FamilyRegistry.hpp"

namespace gemmtune {

namespace {

constexpr int kVector = 4;  // floats per global access in the unguarded form

Family tf32x3Family() {
  Family f;
  f.name = "tf32x3";
  f.templateFile = "cutlass_tf32x3.cu";
  f.kernelName = "sgemm_cutlass_tf32x3";
  f.description = "FP32 on tensor cores at FP32 accuracy: CUTLASS tensor-op GEMM, 3xTF32 (OpMultiplyAddFastF32), "
                  "mma.sync 16×8×8";
  f.precision = PrecisionClass::faithful;
  f.order = 50;
  // Tiles of 64 and 128: three products per multiply-add hold twice the operand fragments of a
  // TF32 GEMM, and larger tiles spill (issue 29's measurement on an H100, with CUTLASS outside
  // gemmtune: 128×256 and 256×128 3xTF32 tiles ran at 8–16 TFLOP/s, 64–128 tiles at up to 69).
  // BK 16 or 32: two or four mma k-steps per stage.
  f.params = {
      {"BM", "bm", {64, 128}, "rows of the C tile per block (threadblock M)"},
      {"BN", "bn", {64, 128}, "columns of the C tile per block (threadblock N)"},
      {"BK", "bk", {16, 32}, "depth of a k tile per pipeline stage (threadblock K), a multiple of the mma's 8"},
      {"WM", "wm", {32, 64}, "rows of a warp tile (a multiple of the mma's 16)"},
      {"WN", "wn", {32, 64}, "columns of a warp tile (a multiple of the mma's 8)"},
      {"STAGES", "st", {3, 4}, "cp.async pipeline stages between global and shared memory"},
      {"SWIZZLE", "sw", {4}, "most tile columns a rasterization group spans (L2 reuse)"},
      {"SPLITK", "sk", {1, 2, 4}, "K slices (serial split-K: each slice adds its part into C in turn; one program for all)",
       /*launchOnly=*/true},
  };
  // CUTLASS's own 3xTF32 example tile (examples/27_ampere_3xtf32_fast_accurate_tensorop_gemm).
  f.classic = std::vector<int>{128, 64, 16, 64, 32, 3, 4, 1};
  f.constraints = {
      {"mma_tiles_fit", "WM must be a multiple of 16, WN of 8 and BK of 8: warps compute whole m16n8k8 mma tiles",
       [](const Config& c) { return c["WM"] % 16 == 0 && c["WN"] % 8 == 0 && c["BK"] % 8 == 0; }},
      {"warp_tile_registers",
       "WM·WN at most 64·32: big and small fragments of both operands beside the accumulators; 64×64 warp tiles "
       "spill (255 registers and 1 KB of spills per thread on sm_90)",
       [](const Config& c) { return c["WM"] * c["WN"] <= 64 * 32; }},
      {"two_to_eight_warps", "(BM/WM)·(BN/WN) must be 2 to 8 warps",
       [](const Config& c) { return cutlassWarps(c) >= 2 && cutlassWarps(c) <= 8; }},
  };
  f.targetConstraints = {
      {"tf32_mma", "TF32 tensor-core mma and cp.async need sm_80 or newer",
       [](const Config&, const GpuSpec& gpu) { return gpu.ccMajor >= 8; }},
  };
  addCutlassGemmTraits(f, kVector);
  return f;
}

}  // namespace

GEMMTUNE_REGISTER_FAMILY(tf32x3Family)

}  // namespace gemmtune
