// The fp16x3 family's plan (no GPU): eight launches in order (per operand maxima, scales, split;
// the GEMM; unscale), the GEMM's grid as the plan's main launch, scratch sized past the zeroed
// prefix one region per batch, and refusals where the scratch or the grids would not hold.
// Run: ctest -R Fp16x3Plan
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "FamilyPlans.hpp"
#include "FamilyRegistry.hpp"

using namespace gemmtune;

namespace {

const char* kWide = "fp16x3_bm128_bn256_bk64_wm64_wn64_st4_sw4";

GemmProblem problem(long long m, long long n, long long k, long long batch = 1) {
  return GemmProblem::packed(GemmShape{m, n, k, Layout{}, batch});
}

}  // namespace

TEST(Fp16x3Plan, TheGemmIsTheMainLaunchThoughSixPassesComeFirst) {
  const Config c = FamilyRegistry::builtin().parseName(kWide);
  const LaunchPlan plan = planLaunch(c, problem(4096, 4096, 512));
  ASSERT_TRUE(plan.runnable()) << plan.refusal;
  std::vector<int> order;
  for (const KernelLaunch& l : plan.launches) order.push_back(l.kernel);
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3, 4, 5, 6, 0, 7}));
  EXPECT_EQ(&plan.mainLaunch(), &plan.launches.at(6));
  EXPECT_EQ(plan.mainLaunch().grid.volume(), 32ULL * 16);  // 128×256 tiles of 4096×4096
  EXPECT_NE(plan.launches.front().grid.volume(), plan.mainLaunch().grid.volume());
}

TEST(Fp16x3Plan, ScratchIsOneRegionPerBatchPastTheZeroedPrefix) {
  const Config c = FamilyRegistry::builtin().parseName(kWide);
  const LaunchPlan one = planLaunch(c, problem(8192, 8192, 8192));
  ASSERT_TRUE(one.runnable()) << one.refusal;
  const long long scratch = one.workspaceBytes - kZeroedWorkspaceBytes;
  // A' and B' in FP16 over 3K (2·8192·3·8192 bytes each), D in FP32, scales, flags and maxima.
  EXPECT_GE(scratch, 2LL * (2 * 8192LL * 3 * 8192) + 4LL * 8192 * 8192);
  EXPECT_LT(scratch, 2LL * (2 * 8192LL * 3 * 8192) + 4LL * 8192 * 8192 + (8LL << 20));
  const LaunchPlan three = planLaunch(c, problem(8192, 8192, 8192, 3));
  ASSERT_TRUE(three.runnable()) << three.refusal;
  EXPECT_EQ(three.workspaceBytes - kZeroedWorkspaceBytes, 3 * scratch);
}

// Before, batch × scratch was computed before the limit was checked: at these sizes it wrapped
// negative, passed the limit, and the kernels would have written through a null workspace.
TEST(Fp16x3Plan, ScratchBeyondItsLimitIsRefusedWithoutOverflow) {
  const Config c = FamilyRegistry::builtin().parseName(kWide);
  for (long long batch : {1LL, 16LL, 17LL}) {
    const LaunchPlan huge = planLaunch(c, problem(2147483647LL, 67107840LL, 1, batch));
    EXPECT_FALSE(huge.runnable()) << "batch " << batch;
    EXPECT_NE(huge.refusal.find("more than 16 GiB of workspace"), std::string::npos) << huge.refusal;
  }
  // The GEMM's grid is the swizzle's, refused as the cutlass family's is.
  const LaunchPlan wide = planLaunch(c, problem(64, 2147483640LL, 1));
  EXPECT_NE(wide.refusal.find("column groups exceed the grid's 65535 in y"), std::string::npos) << wide.refusal;
  // 8192³ fits once (about 1.1 GiB); twenty of them do not.
  EXPECT_TRUE(planLaunch(c, problem(8192, 8192, 8192, 14)).runnable());
  EXPECT_FALSE(planLaunch(c, problem(8192, 8192, 8192, 20)).runnable());
}
