// Spec of templates/blocktile_1d.cu: a BM×BN tile of C per block, TM results of one column per
// thread, A/B tiles of depth BK loaded cooperatively in strided steps into dynamic shared memory.
#include "../FamilyRegistry.hpp"

namespace gemmtune {

Family blocktile1dFamily() {
  Family f;
  f.name = "blocktile1d";
  f.templateFile = "blocktile_1d.cu";
  f.kernelName = "sgemm_blocktile_1d";
  f.description = "1D-blocktiled SGEMM, TM results of one column per thread";
  f.params = {
      {"BM", "bm", {16, 32, 64, 128, 256}, "rows of the C tile per block"},
      {"BN", "bn", {16, 32, 64, 128, 256}, "columns of the C tile per block"},
      {"BK", "bk", {4, 8, 16, 32, 64}, "depth of the A/B tiles staged in shared memory"},
      {"TM", "tm", {1, 2, 4, 8, 16, 32}, "results per thread (rows of one column)"},
  };
  f.classic = {64, 64, 8, 8};
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
  f.grid = [](const Config& c, long long M, long long N) {
    const long long bm = c["BM"], bn = c["BN"];
    return Dim3{static_cast<unsigned>((N + bn - 1) / bn), static_cast<unsigned>((M + bm - 1) / bm), 1};
  };
  f.dynamicSmemBytes = [](const Config& c) { return (c["BM"] + c["BN"]) * c["BK"] * 4; };
  f.staticSmemBytes = [](const Config&) { return 0; };
  f.mTile = [](const Config& c) { return c["BM"]; };
  f.nTile = [](const Config& c) { return c["BN"]; };
  f.kTile = [](const Config& c) { return c["BK"]; };
  return f;
}

}  // namespace gemmtune
