// Spec of templates/smem_tiled.cu: one BLOCKSIZE×BLOCKSIZE tile of C per block, one result per
// thread, A and B tiles staged through shared memory.
#include "../FamilyRegistry.hpp"

namespace gemmtune {

namespace {

Family smemTiledFamily() {
  Family f;
  f.name = "smem";
  f.templateFile = "smem_tiled.cu";
  f.kernelName = "sgemm_smem_tiled";
  f.headers = {"batch.cuh"};  // the batch argument every kernel takes
  f.description = "shared-memory tiled SGEMM, one result per thread";
  f.order = 10;
  f.params = {{"BLOCKSIZE", "bs", {8, 16, 24, 32}, "edge of the square C tile; BLOCKSIZE^2 threads"}};
  f.classic = std::vector<int>{32};
  f.constraints = {
      {"bs_positive", "a tile needs at least one row and column",
       [](const Config& c) { return c["BLOCKSIZE"] >= 1; }},
      {"whole_warps", "BLOCKSIZE^2 threads must be a multiple of 32, or lanes of the last warp idle",
       [](const Config& c) { return c["BLOCKSIZE"] * c["BLOCKSIZE"] % 32 == 0; }},
      {"max_threads", "CUDA caps every block at 1024 threads; the template static_asserts it",
       [](const Config& c) { return c["BLOCKSIZE"] * c["BLOCKSIZE"] <= 1024; }},
  };
  f.threadsPerBlock = [](const Config& c) { return c["BLOCKSIZE"] * c["BLOCKSIZE"]; };
  f.dynamicSmemBytes = [](const Config&) { return 0; };
  // Transposed operands' tiles have padded rows (templates/smem_tiled.cu says why): A's by 4
  // floats, B's by 1.
  f.staticSmemBytes = [](const Config& c) {
    const int bs = c["BLOCKSIZE"];
    return (2 * bs + 4 * c.layout.transA + c.layout.transB) * bs * 4;
  };
  f.plan = [](const Config& c, const GemmProblem& p) {
    const int bs = c["BLOCKSIZE"];
    return tiledPlan(c, p, {bs, bs, bs});
  };
  return f;
}

}  // namespace

GEMMTUNE_REGISTER_FAMILY(smemTiledFamily)

}  // namespace gemmtune
