// Spec of tests/families/probe_naive.cu: a family added by the tests alone. Linked into the test
// programs (and a test build of the CLI), it enrolls itself like every built-in family; no other
// file of the project names it.
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "FamilyRegistry.hpp"

namespace gemmtune {

namespace {

Family probeNaiveFamily() {
  Family f;
  f.name = "probe";
  f.templateFile = "probe_naive.cu";
  f.kernelName = "sgemm_probe_naive";
  f.headers = {"batch.cuh"};
  f.description = "test-only naive SGEMM, one result per thread";
  f.order = 1000;
  f.params = {{"BS", "bs", {8, 16}, "edge of the square C tile of a block"}};
  f.constraints = {{"whole_warps", "BS*BS threads must be whole warps and at most 1024",
                    [](const Config& c) { return c["BS"] * c["BS"] % 32 == 0 && c["BS"] * c["BS"] <= 1024; }}};
  f.threadsPerBlock = [](const Config& c) { return c["BS"] * c["BS"]; };
  f.dynamicSmemBytes = [](const Config&) { return 0; };
  f.staticSmemBytes = [](const Config&) { return 0; };
  f.plan = [](const Config& c, const GemmProblem& p) {
    if (p.layout != Layout{}) return LaunchPlan::refused("the probe reads nn only");
    // K needs no tiling: the unguarded form only needs BS | M and BS | N.
    return tiledPlan(c, p, {c["BS"], c["BS"], 1});
  };
  f.templateText = [] {
    std::ifstream in(GEMMTUNE_SOURCE_DIR "/tests/families/probe_naive.cu");
    if (!in) throw std::runtime_error("cannot read tests/families/probe_naive.cu");
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  };
  return f;
}

}  // namespace

GEMMTUNE_REGISTER_FAMILY(probeNaiveFamily)

}  // namespace gemmtune
