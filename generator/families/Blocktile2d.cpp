// Spec of templates/blocktile_2d.cu: a BM×BN tile of C per block, a TM×TN sub-tile per thread,
// A transposed in shared memory; float4 loads and stores in the unguarded form.
#include "../FamilyRegistry.hpp"

#include <algorithm>

namespace gemmtune {

namespace {

int threads(const Config& c) { return (c["BM"] / c["TM"]) * (c["BN"] / c["TN"]); }

Family blocktile2dFamily() {
  Family f;
  f.name = "blocktile2d";
  f.templateFile = "blocktile_2d.cu";
  f.kernelName = "sgemm_blocktile_2d";
  f.headers = {"batch.cuh"};  // the batch argument every kernel takes
  f.description = "2D-blocktiled SGEMM, TM×TN results per thread, A transposed in shared memory, float4 loads";
  f.order = 25;
  f.params = {
      {"BM", "bm", {64, 128}, "rows of the C tile per block"},
      {"BN", "bn", {64, 128}, "columns of the C tile per block"},
      {"BK", "bk", {8, 16}, "depth of the A and B tiles in shared memory"},
      {"TM", "tm", {4, 8}, "rows of C per thread"},
      {"TN", "tn", {4, 8}, "columns of C per thread"},
  };
  f.classic = std::vector<int>{128, 128, 8, 8, 8};  // the public 2D-blocktiling kernel's shape
  f.constraints = {
      {"float4_fragments", "TM and TN must be multiples of 4: fragments are read, and C stored, as float4",
       [](const Config& c) { return c["TM"] % 4 == 0 && c["TN"] % 4 == 0; }},
      {"float4_k", "BK must be a multiple of 4: A is loaded as float4 along k",
       [](const Config& c) { return c["BK"] % 4 == 0; }},
      {"sub_tiles_fit", "TM must divide BM and TN must divide BN: each thread owns a whole sub-tile",
       [](const Config& c) { return c["BM"] % c["TM"] == 0 && c["BN"] % c["TN"] == 0; }},
      {"float4_columns", "BN must be a multiple of 4: B is loaded as float4 along n",
       [](const Config& c) { return c["BN"] % 4 == 0; }},
      {"whole_warps", "(BM/TM)·(BN/TN) threads must be whole warps and at most 1024",
       [](const Config& c) { return threads(c) % 32 == 0 && threads(c) <= 1024; }},
  };
  f.targetConstraints = {
      {"register_estimate", "TM·TN accumulators plus fragments and addresses must fit the GPU's registers per thread",
       [](const Config& c, const GpuSpec& gpu) {
         return c["TM"] * c["TN"] + c["TM"] + c["TN"] + 24 <= std::min(gpu.maxRegsPerThread, gpu.regsPerBlock / threads(c));
       }},
  };
  f.threadsPerBlock = threads;
  // A transposed in rows of BM + 4; B in rows of BN, or BN + 4 where op(B) = T scatters it.
  f.dynamicSmemBytes = [](const Config& c) { return (c["BM"] + 4 + c["BN"] + (c.layout.transB ? 4 : 0)) * c["BK"] * 4; };
  f.staticSmemBytes = [](const Config&) { return 0; };
  f.plan = [](const Config& c, const GemmProblem& p) { return tiledPlan(c, p, {c["BM"], c["BN"], c["BK"], 4}); };
  return f;
}

}  // namespace

GEMMTUNE_REGISTER_FAMILY(blocktile2dFamily)

}  // namespace gemmtune
