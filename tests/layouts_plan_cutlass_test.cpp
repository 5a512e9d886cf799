// The cutlass family's plans for every layout and for batches: a layout changes the program (its
// template flags, its instance name), never the grid; a batch multiplies the grid's depth (batches
// × K slices, templates/cutlass_simt.cu reads slice z % slices of batch z / slices) and the
// split-K locks (one set per batch). No GPU: the kernels themselves are checked on one later.
// Run: ctest -R LayoutsPlanCutlass
#include <gtest/gtest.h>

#include <string>

#include "FamilyPlans.hpp"
#include "FamilyRegistry.hpp"

using namespace gemmtune;

namespace {

// The plan of `config` compiled for the problem's layout (planLaunch refuses another layout).
LaunchPlan planFor(Config config, const GemmProblem& problem) {
  config.layout = problem.layout;
  return planLaunch(config, problem);
}

Config config(const std::string& name) { return FamilyRegistry::builtin().parseName(name); }

// Row-major C (m×n), op(A), op(B) as `layout` names, packed, `batch` strided matrices.
GemmProblem problem(long long m, long long n, long long k, const char* layout, long long batch = 1) {
  return GemmProblem::packed(GemmShape{m, n, k, *Layout::parse(layout), batch});
}

const char* kSplit4 = "cutlass_bm64_bn64_bk8_wm32_wn32_st4_sw4_sk4";
const char* kWhole = "cutlass_bm128_bn256_bk8_wm64_wn64_st4_sw4_sk1";

}  // namespace

TEST(LayoutsPlanCutlass, EveryLayoutRunsOnTheSameGridAsNn) {
  const Config c = config(kWhole);
  const LaunchPlan nn = planFor(c, problem(1000, 3000, 700, "nn"));
  ASSERT_TRUE(nn.runnable()) << nn.refusal;
  for (const Layout& layout : Layout::all()) {
    const GemmProblem p = problem(1000, 3000, 700, layout.text().c_str());
    const Config form = formFor(c, p);
    EXPECT_EQ(form.layout, layout);
    EXPECT_FALSE(form.guarded) << layout.text();  // CUTLASS predicates every access: one form
    const LaunchPlan plan = planFor(form, p);
    ASSERT_TRUE(plan.runnable()) << layout.text() << ": " << plan.refusal;
    EXPECT_EQ(plan.launches.at(0).grid, nn.launches.at(0).grid) << layout.text();
    EXPECT_EQ(plan.launches.at(0).grid, (Dim3{8 * 4, 3, 1})) << layout.text();  // 12 column tiles: groups of 4
    EXPECT_EQ(plan.workspaceBytes, 0);
  }
}

TEST(LayoutsPlanCutlass, InstanceNamesAndTemplateFlagsCarryTheLayout) {
  Config c = config(kWhole);
  EXPECT_EQ(c.nameExpression(), "sgemm_cutlass_simt<128,256,8,64,64,4,4,false,false,false>");
  c.layout = *Layout::parse("tn");
  EXPECT_EQ(c.name(), "cutlass_bm128_bn256_bk8_wm64_wn64_st4_sw4_sk1_tn");
  EXPECT_EQ(c.nameExpression(), "sgemm_cutlass_simt<128,256,8,64,64,4,4,false,true,false>");
  EXPECT_EQ(config(c.name()), c);
  c.layout = *Layout::parse("nt");
  EXPECT_EQ(c.nameExpression(), "sgemm_cutlass_simt<128,256,8,64,64,4,4,false,false,true>");
  c.layout = *Layout::parse("tt");
  EXPECT_EQ(c.name(), "cutlass_bm128_bn256_bk8_wm64_wn64_st4_sw4_sk1_tt");
  EXPECT_EQ(c.nameExpression(), "sgemm_cutlass_simt<128,256,8,64,64,4,4,false,true,true>");
  EXPECT_EQ(config(c.name()), c);
  // The slice count stays launch-only in every layout: one program for all of them.
  Config split = config(std::string(kSplit4) + "_tt");
  EXPECT_EQ(split.layout, c.layout);
  EXPECT_EQ(split.nameExpression(), "sgemm_cutlass_simt<64,64,8,32,32,4,4,false,true,true>");
}

// A transposed operand's leading dimension is checked against its stored rows' length.
TEST(LayoutsPlanCutlass, TransposedLeadingDimensionsFollowTheStoredRows) {
  const Config c = config(kSplit4);
  GemmProblem tn = problem(100, 60, 30, "tn");  // A stored as 30 rows of 100
  EXPECT_EQ(tn.lda, 100);
  EXPECT_TRUE(planFor(c, tn).runnable());
  tn.lda = 99;
  EXPECT_NE(planFor(c, tn).refusal.find("lda must be at least 100"), std::string::npos) << planFor(c, tn).refusal;
  GemmProblem nt = problem(100, 60, 30, "nt");  // B stored as 60 rows of 30
  EXPECT_EQ(nt.ldb, 30);
  EXPECT_TRUE(planFor(c, nt).runnable());
  nt.ldb = 29;
  EXPECT_NE(planFor(c, nt).refusal.find("ldb must be at least 30"), std::string::npos) << planFor(c, nt).refusal;
  GemmProblem odd = problem(17, 33, 7, "tt");
  odd.lda = 18, odd.ldb = 9, odd.alignA = 4, odd.alignB = 4;  // odd rows, 4-byte bases: alignment 1 runs them
  EXPECT_TRUE(planFor(c, odd).runnable()) << planFor(c, odd).refusal;
}

TEST(LayoutsPlanCutlass, BatchesMultiplyTheGridDepthAndTheLocks) {
  const Config one = config("cutlass_bm64_bn64_bk8_wm32_wn32_st4_sw4_sk1");
  const Config four = config(kSplit4);
  const long long tiles = 4 * 3;  // 250 rows, 130 columns of 64×64 tiles
  for (const char* layout : {"nn", "nt", "tn", "tt"}) {
    const GemmProblem p = problem(250, 130, 500, layout, 8);
    const LaunchPlan whole = planFor(one, p);
    ASSERT_TRUE(whole.runnable()) << whole.refusal;
    EXPECT_EQ(whole.launches.at(0).grid, (Dim3{4 * 4, 1, 8})) << layout;  // 3 column tiles: one group of 4
    EXPECT_EQ(whole.workspaceBytes, 0) << layout;  // one slice takes no locks
    const LaunchPlan split = planFor(four, p);
    ASSERT_TRUE(split.runnable()) << split.refusal;
    EXPECT_EQ(split.launches.at(0).grid, (Dim3{4 * 4, 1, 8 * 4})) << layout;
    EXPECT_EQ(split.workspaceBytes, 8 * tiles * 4) << layout;  // one lock per C tile of every batch
    EXPECT_EQ(split.launches.at(0).args.back(), KernelArg::Workspace);
  }
  // One matrix: the depth is the slice count alone, the locks one set.
  const LaunchPlan single = planFor(four, problem(250, 130, 500, "tn"));
  EXPECT_EQ(single.launches.at(0).grid.z, 4u);
  EXPECT_EQ(single.workspaceBytes, tiles * 4);
}

// clusterk: the same grid as cutlass, its depth batches × 2 slices (each cluster of 1×1×2 blocks one
// tile's slices), and no workspace: the slices are summed in the cluster's shared memory, which the
// plan says so that the model charges no partial tiles through DRAM.
TEST(LayoutsPlanCutlass, ClusterSlicesTakeNoWorkspaceAndSayTheyAreSummedOnChip) {
  const Config clusterk = config("clusterk_bm128_bn128_bk8_wm64_wn64_st3_sw4_sk2");
  const Config cutlass = config("cutlass_bm128_bn128_bk8_wm64_wn64_st3_sw4_sk2");
  for (const char* layout : {"nn", "nt", "tn", "tt"}) {
    const GemmProblem p = problem(250, 130, 500, layout, 8);
    const LaunchPlan plan = planFor(clusterk, p);
    ASSERT_TRUE(plan.runnable()) << plan.refusal;
    EXPECT_EQ(plan.launches.at(0).grid, planFor(cutlass, p).launches.at(0).grid) << layout;
    EXPECT_EQ(plan.launches.at(0).grid.z, 8u * 2) << layout;
    EXPECT_EQ(plan.workspaceBytes, 0) << layout;
    EXPECT_EQ(plan.kSlices, 2) << layout;
    EXPECT_TRUE(plan.slicesSummedOnChip) << layout;
    EXPECT_FALSE(planFor(cutlass, p).slicesSummedOnChip) << layout;
  }
}

TEST(LayoutsPlanCutlass, PointerArraysAndBroadcastOperandsPlanAsStridedBatches) {
  const Config c = config(kSplit4);
  GemmProblem arrays = problem(64, 64, 64, "nt", 3);
  arrays.pointerArrays = true;
  arrays.strideA = arrays.strideB = arrays.strideC = 0;  // unused with arrays
  arrays.alignA = arrays.alignB = arrays.alignC = 4;  // what problemOf assumes of arrays' pointers
  const LaunchPlan plan = planFor(c, arrays);
  ASSERT_TRUE(plan.runnable()) << plan.refusal;
  EXPECT_EQ(plan.launches.at(0).grid, (Dim3{1, 1, 3 * 4}));
  EXPECT_EQ(plan.workspaceBytes, 3 * 4);
  GemmProblem broadcast = problem(64, 64, 64, "tn", 5);
  broadcast.strideB = 0;  // every batch reads the same B
  EXPECT_TRUE(planFor(c, broadcast).runnable());
  GemmProblem overlapping = problem(64, 64, 64, "tn", 5);
  overlapping.strideC = 64 * 64 - 1;
  EXPECT_EQ(planFor(c, overlapping).refusal, malformedProblem(overlapping));
}

TEST(LayoutsPlanCutlass, GridDepthBeyond65535LayersIsRefusedWithTheReason) {
  const Config four = config(kSplit4);
  EXPECT_TRUE(planFor(four, problem(8, 8, 8, "tt", 16383)).runnable());  // 65532 layers
  const LaunchPlan deep = planFor(four, problem(8, 8, 8, "tt", 16384));  // 65536 layers
  ASSERT_FALSE(deep.runnable());
  EXPECT_NE(deep.refusal.find("16384 batches x 4 K slices exceed the grid's 65535 layers in z"), std::string::npos)
      << deep.refusal;
  const Config one = config("cutlass_bm64_bn64_bk8_wm32_wn32_st4_sw4_sk1");
  EXPECT_EQ(planFor(one, problem(8, 8, 8, "nn", 65535)).launches.at(0).grid.z, 65535u);
  EXPECT_FALSE(planFor(one, problem(8, 8, 8, "nn", 65536)).runnable());
}

// Grid y counts groups of column tiles; past 65535 no launch can hold them (found writing these
// tests: the plan used to hand such a grid to the driver, which refuses it at launch).
TEST(LayoutsPlanCutlass, ColumnGroupsBeyondGridYAreRefused) {
  const Config c = config("cutlass_bm128_bn32_bk8_wm32_wn32_st3_sw1_sk1");  // swizzle 1: one tile per group
  const LaunchPlan widest = planFor(c, problem(1, 65535LL * 32, 1, "nt"));
  ASSERT_TRUE(widest.runnable()) << widest.refusal;
  EXPECT_EQ(widest.launches.at(0).grid, (Dim3{1, 65535, 1}));
  const LaunchPlan wider = planFor(c, problem(1, 65535LL * 32 + 1, 1, "nt"));
  ASSERT_FALSE(wider.runnable());
  EXPECT_NE(wider.refusal.find("65536 column groups exceed the grid's 65535 in y"), std::string::npos) << wider.refusal;
}

TEST(LayoutsPlanCutlass, NoInterimRefusalIsLeft) {
  const Config c = config(kWhole);
  for (const Layout& layout : Layout::all()) {
    const LaunchPlan plan = planFor(c, problem(256, 256, 256, layout.text().c_str(), 2));
    EXPECT_TRUE(plan.runnable()) << layout.text() << ": " << plan.refusal;
  }
}
