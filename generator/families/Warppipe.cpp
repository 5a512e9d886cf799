// Spec of templates/warppipe.cu: warptile's warp tiling (its parameters and every constraint,
// taken from warptileFamily so the two cannot drift apart) with k tiles fed through a STAGES-deep
// cp.async pipeline instead of staging registers (sm_80+; below, warptile's register double
// buffer is the form that runs).
#include "../FamilyRegistry.hpp"

namespace gemmtune {

Family warptileFamily();                   // Warptile.cpp
int warptileStageFloats(const Config& c);  // Warptile.cpp: floats of one k tile in shared memory

namespace {

Family warppipeFamily() {
  Family f = warptileFamily();
  f.name = "warppipe";
  f.templateFile = "warppipe.cu";
  f.kernelName = "sgemm_warppipe";
  f.description = "warptile's warp tiling with a STAGES-deep cp.async pipeline from global to shared memory";
  f.order = 32;
  // BK 8 only by default (cuBLAS's own FP32 kernels on Hopper: 128×128×8, 3 stages): a deeper
  // pipeline of thin k tiles stands in for warptile's BK 16, and keeps the space at 186 (BK 16
  // through --params).
  for (auto& p : f.params)
    if (p.name == "BK") p.domain = {8};
  f.params.push_back({"STAGES", "st", {2, 3, 4}, "k tiles in shared memory: STAGES - 1 in flight while one is multiplied"});
  f.classic = std::vector<int>{128, 128, 8, 64, 32, 2, 4, 4, 256, 3};  // warptile's classic, three stages
  f.constraints.push_back({"a_row_stride", "BM must be a multiple of 32: A's one-float copies then land in 32 different banks",
                           [](const Config& c) { return c["BM"] % 32 == 0; }});
  f.constraints.push_back({"pipeline_stages", "STAGES must be 2 to 8: one k tile lands while another is multiplied; more only cost shared memory",
                           [](const Config& c) { return c["STAGES"] >= 2 && c["STAGES"] <= 8; }});
  // The register estimate is warptile's (its staging registers stand in for the copies' addresses).
  f.targetConstraints.push_back(
      {"cp_async", "cp.async pipelines need sm_80 or newer", [](const Config&, const GpuSpec& gpu) { return gpu.ccMajor >= 8; }});
  f.dynamicSmemBytes = [](const Config& c) { return c["STAGES"] * warptileStageFloats(c) * 4; };
  f.headers.push_back("cp_async.cuh");  // the cp.async copies, shared with thin
  return f;
}

}  // namespace

GEMMTUNE_REGISTER_FAMILY(warppipeFamily)

}  // namespace gemmtune
