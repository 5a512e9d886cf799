// Spec of templates/blocktile_1d.cu: a BM×BN tile of C per block, TM results of one column per
// thread; A (transposed, padded) and B tiles of depth BK loaded with compile-time trip counts.
#include "../FamilyRegistry.hpp"

namespace gemmtune {

namespace {

// Row stride (floats) of B's tile in shared memory: BN, or for op(B) = T the padded stride of
// templates/blocktile_1d.cu's gemmtune_blocktile1d_stride_b (the same formula: the launch's
// shared memory must hold what the template indexes).
int strideB(const Config& c) {
  const int bn = c["BN"], bk = c["BK"];
  if (!c.layout.transB) return bn;
  return bn + ((bk >= 32 ? 1 : 32 / bk) - bn % 32 + 32) % 32;
}

Family blocktile1dFamily() {
  Family f;
  f.name = "blocktile1d";
  f.templateFile = "blocktile_1d.cu";
  f.kernelName = "sgemm_blocktile_1d";
  f.headers = {"batch.cuh"};  // the batch argument every kernel takes
  f.description = "1D-blocktiled SGEMM, TM results of one column per thread";
  f.params = {
      {"BM", "bm", {16, 32, 64, 128, 256}, "rows of the C tile per block"},
      {"BN", "bn", {16, 32, 64, 128, 256}, "columns of the C tile per block"},
      {"BK", "bk", {4, 8, 16, 32, 64}, "depth of the A/B tiles staged in shared memory"},
      {"TM", "tm", {1, 2, 4, 8, 16, 32}, "results per thread (rows of one column)"},
  };
  f.order = 20;
  f.classic = std::vector<int>{64, 64, 8, 8};
  f.libraryDefault = true;  // 512 threads, 4 KiB of shared memory: runs on every GPU we compile for
  f.constraints = {
      {"positive", "every tile edge and TM must be at least 1",
       [](const Config& c) { return c["BM"] >= 1 && c["BN"] >= 1 && c["BK"] >= 1 && c["TM"] >= 1; }},
      {"tm_divides_bm", "each thread owns TM whole rows of one column, so TM must divide BM",
       [](const Config& c) { return c["BM"] % c["TM"] == 0; }},
      {"whole_warps", "BM*BN/TM threads must be a multiple of 32, or lanes of the last warp idle",
       [](const Config& c) { return (c["BM"] / c["TM"]) * c["BN"] % 32 == 0; }},
      {"max_threads", "CUDA caps every block at 1024 threads; the template static_asserts it",
       [](const Config& c) { return c["BM"] / c["TM"] * c["BN"] <= 1024; }},
  };
  f.threadsPerBlock = [](const Config& c) { return c["BM"] / c["TM"] * c["BN"]; };
  f.dynamicSmemBytes = [](const Config& c) { return (c["BM"] + 4 + strideB(c)) * c["BK"] * 4; };  // A transposed, padded
  f.staticSmemBytes = [](const Config&) { return 0; };
  f.plan = [](const Config& c, const GemmProblem& p) { return tiledPlan(c, p, {c["BM"], c["BN"], c["BK"]}); };
  return f;
}

}  // namespace

GEMMTUNE_REGISTER_FAMILY(blocktile1dFamily)

}  // namespace gemmtune
