// The streamk family without a GPU: its plan (one wave of at most 512 blocks over all tiles' k
// steps, the workspace's flags and partial tiles), the one-wave block count the device layer and
// the model share, the model's geometry of a one-wave launch, and its default space. The kernel
// itself is checked on a GPU (WorkerGpu, LayoutsGpu).
// Run: ctest -R StreamK
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <string>

#include "FamilyModel.hpp"
#include "FamilyPlans.hpp"
#include "FamilyRegistry.hpp"
#include "NearestChoice.hpp"
#include "TemplateSource.hpp"
#include "db_test_support.hpp"

using namespace gemmtune;

namespace {

const char* kTile128 = "streamk_bm128_bn128_bk8_wm32_wn64_st3_sw4";

Config config(const std::string& name) { return FamilyRegistry::builtin().parseName(name); }

LaunchPlan planFor(Config c, const GemmProblem& p) {
  c.layout = p.layout;
  return planLaunch(c, p);
}

GemmProblem problem(long long m, long long n, long long k, const char* layout = "nn", long long batch = 1) {
  return GemmProblem::packed(GemmShape{m, n, k, *Layout::parse(layout), batch});
}

}  // namespace

// The grid is the most blocks the kernel may use (one per k step, at most 512); the device layer
// runs one wave of them. The workspace holds 512 flags in its zeroed part and 512 partial tiles past it.
TEST(StreamKPlan, IsOneWaveOfAtMostOneBlockPerKStep) {
  const Config c = config(kTile128);
  for (const Layout& layout : Layout::all()) {
    // 250x130: 2x2 tiles of 128x128, 8 batches, ceil(500/8) = 63 k steps each: 2016 steps.
    const LaunchPlan plan = planFor(c, problem(250, 130, 500, layout.text().c_str(), 8));
    ASSERT_TRUE(plan.runnable()) << plan.refusal;
    const KernelLaunch& l = plan.mainLaunch();
    EXPECT_TRUE(l.oneWave);
    EXPECT_EQ(l.grid, (Dim3{512, 1, 1})) << layout.text();
    EXPECT_EQ(l.block.x, 256u);
    EXPECT_EQ(l.dynamicSmemBytes, 128 * (128 + 4) * 4);  // the tile outgrows 3 stages' pipeline
    EXPECT_EQ(l.args.back(), KernelArg::Workspace);
    EXPECT_EQ(plan.workspaceBytes, kZeroedWorkspaceBytes + 512LL * 128 * 128 * 4);
    EXPECT_EQ(plan.tileM, 128);
    EXPECT_EQ(plan.tileN, 128);
    EXPECT_EQ(plan.tileK, 8);
    EXPECT_EQ(plan.kSlices, 1);
  }
  // One tile of one k step: one block.
  EXPECT_EQ(planFor(c, problem(17, 33, 7)).mainLaunch().grid, (Dim3{1, 1, 1}));
  // 257x129x65: 3x2 tiles of 9 steps, 54 blocks at most.
  EXPECT_EQ(planFor(c, problem(257, 129, 65)).mainLaunch().grid.x, 54u);
  GemmProblem odd = problem(64, 64, 64);
  odd.alignB = 2;
  EXPECT_NE(planFor(c, odd).refusal.find("4-byte aligned"), std::string::npos);
}

// The kernel's bound on blocks and the workspace offset of its partial tiles are the plan's.
TEST(StreamKPlan, TemplateAndPlanAgreeOnTheBlockBoundAndThePartialsOffset) {
  const std::string text = TemplateSource().get(FamilyRegistry::builtin().get("streamk"));
  EXPECT_NE(text.find("#define GEMMTUNE_STREAMK_MAX_BLOCKS 512\n"), std::string::npos);
  EXPECT_NE(text.find("#define GEMMTUNE_STREAMK_PARTIALS_OFFSET (64LL << 20)\n"), std::string::npos);
  EXPECT_EQ(kZeroedWorkspaceBytes, 64LL << 20);
  EXPECT_EQ(planFor(config(kTile128), problem(8192, 8192, 8192)).mainLaunch().grid.x, 512u);
}

TEST(StreamKPlan, OneWaveIsTheSmsTimesTheBlocksEachHoldsAtMostThePlanned) {
  EXPECT_EQ(oneWaveBlocks(512, 132, 2), 264);
  EXPECT_EQ(oneWaveBlocks(54, 132, 2), 54);
  EXPECT_EQ(oneWaveBlocks(512, 0, 2), 512);  // unknown: the plan's bound
  EXPECT_EQ(oneWaveBlocks(512, 132, 0), 512);
}

// The model sees one wave: its blocks share all k steps evenly (plus a block's fixed cost for
// each tile segment past its first), and about every block stores one partial tile.
TEST(StreamKPlan, TheModelsGeometryIsOneWaveSharingEveryKStep) {
  GpuSpec gpu = test::testGpu();
  gpu.smCount = 132;
  db::StoredResult row;
  row.registers = 128;  // 256 threads of 128 registers: two blocks fill an SM's 64K registers
  const db::ProblemKey p{1619, 1367, 1092};
  const auto g = serving::geometryOf(config(kTile128), row, gpu, p);
  ASSERT_TRUE(g);
  ASSERT_EQ(g->residency.blocksPerSm, 2);
  EXPECT_EQ(g->blocks, 264);
  const double tiles = 13.0 * 11, steps = tiles * 137;
  EXPECT_DOUBLE_EQ(g->kPerBlock, steps / 264 * 8 + kBlockFixedK * tiles / 264);
  EXPECT_DOUBLE_EQ(g->partialBytes, 2.0 * 4 * 128 * 128 * 264);
  EXPECT_EQ(g->slices, 1);
}

// Its default space: 128x128 and 64x256 with 4 or 8 warps of 64 columns, 3 stages, one swizzle
// group (4 configurations, each seconds of CUTLASS compilation in the main job).
TEST(StreamKPlan, DefaultSpaceIsTheLargeTiles) {
  std::vector<std::string> valid;
  for (const Config& c : FamilyRegistry::enumerate(FamilyRegistry::builtin().get("streamk"), false))
    if (!c.violated()) valid.push_back(c.name());
  EXPECT_EQ(valid.size(), 4u) << fmt::format("{}", fmt::join(valid, " "));
  for (const std::string& name : valid) {
    EXPECT_EQ(config(name)["BM"] * config(name)["BN"], 128 * 128) << name;
    EXPECT_EQ(config(name)["WN"], 64) << name;
  }
}

// The model's arithmetic term reads a one-wave block's share of K (kPerBlock) where it is set: a
// block sharing 100 elements of K costs what a block over K = 100 does, whatever K the problem has.
TEST(StreamKPlan, TheModelChargesABlockItsShareOfK) {
  MachineRates rates;
  rates.smCount = 132;
  rates.peakGflops = 60000;
  KernelGeometry g;
  g.blocks = 264;
  g.residency = Residency{2, 8};
  g.tileM = g.tileN = 128;
  g.tileK = 8;
  const double shared = [&] {
    KernelGeometry s = g;
    s.kPerBlock = 100;
    return rawMs(db::ProblemKey{1619, 1367, 1092}, s, rates);
  }();
  EXPECT_DOUBLE_EQ(shared, rawMs(db::ProblemKey{1619, 1367, 100}, g, rates));
  EXPECT_LT(shared, rawMs(db::ProblemKey{1619, 1367, 1092}, g, rates) / 5);
}
