// Family specs: domains, constraints with reasons, geometry and shared-memory formulas.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <tuple>

#include "CompileUnit.hpp"
#include "FamilyRegistry.hpp"
#include "HeaderTrees.hpp"
#include "gemmtune/Errors.hpp"

using namespace gemmtune;

namespace {
const FamilyRegistry& reg() { return FamilyRegistry::builtin(); }
}  // namespace

TEST(Family, RegistryListsEveryFamilyOnceInOrder) {
  EXPECT_EQ(reg().choices(), "smem, blocktile1d, blocktile2d, warptile, warppipe, thin, cutlass, streamk, clusterk, tf32x3, fp16x3, wgmmafp16x3");
  EXPECT_NE(reg().find("smem"), nullptr);
  EXPECT_EQ(reg().find("nope"), nullptr);
  try {
    reg().get("nope");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "unknown family 'nope' (choose from: smem, blocktile1d, blocktile2d, warptile, warppipe, thin, cutlass, streamk, clusterk, tf32x3, fp16x3, wgmmafp16x3)");
  }
}

TEST(Family, EveryConstraintHasANameAndReason) {
  for (const auto& f : reg().all())
    for (const auto& c : f.constraints) {
      EXPECT_FALSE(c.name.empty());
      EXPECT_GT(c.reason.size(), 20u) << c.name;
    }
}

// The basis times every skinny tile at every skinny shape: one with the wrong number of values
// would be dropped silently, one outside the default domains skipped, one that violates a
// constraint recorded rejected on every run.
TEST(Family, EverySkinnyTileIsAValidPointOfItsFamilysSpace) {
  for (const Family& f : reg().all())
    for (const std::vector<int>& values : f.skinnyTiles) {
      ASSERT_EQ(values.size(), f.params.size()) << f.name;
      for (size_t p = 0; p < values.size(); ++p) {
        const std::vector<int>& domain = f.params[p].domain;
        EXPECT_NE(std::find(domain.begin(), domain.end(), values[p]), domain.end()) << f.name << " " << f.params[p].name;
      }
      Config c;
      c.family = &f;
      c.values = values;
      EXPECT_EQ(c.violated(), nullptr) << c.name() << " violates " << c.violated()->name;
    }
  EXPECT_EQ(reg().get("thin").skinnyTiles.size(), 3u);
}

// A skinny tile at any slice count (launch-only) is one; another tile, or a wrong-sized list, is not.
TEST(Family, IsSkinnyTileIgnoresLaunchOnlyValues) {
  const Family& thin = reg().get("thin");  // BM BN BK TM TN STAGES SPLITK
  EXPECT_TRUE(thin.isSkinnyTile({16, 16, 32, 2, 2, 4, 1}));
  EXPECT_TRUE(thin.isSkinnyTile({16, 16, 32, 2, 2, 4, 16}));
  EXPECT_FALSE(thin.isSkinnyTile({16, 16, 32, 2, 2, 2, 1}));
  EXPECT_FALSE(thin.isSkinnyTile({64, 64, 32, 4, 4, 4, 1}));
  EXPECT_FALSE(thin.isSkinnyTile({16, 16, 32, 2, 2, 4}));
  EXPECT_FALSE(reg().get("cutlass").isSkinnyTile(reg().get("cutlass").classic.value()));
}

TEST(Family, Blocktile1dSpaceIsLargeAndValid) {
  const auto& f = reg().get("blocktile1d");
  auto all = FamilyRegistry::enumerate(f, false);
  EXPECT_EQ(all.size(), 5u * 5 * 5 * 6);
  int valid = 0;
  std::set<std::string> names;
  for (const auto& c : all) {
    names.insert(c.name());
    if (c.violated()) continue;
    ++valid;
    int threads = f.threadsPerBlock(c);
    EXPECT_EQ(threads % 32, 0);
    EXPECT_EQ(c["BM"] % c["TM"], 0);
    EXPECT_EQ(f.dynamicSmemBytes(c), (c["BM"] + 4 + c["BN"]) * c["BK"] * 4);  // A transposed, padded by 4
  }
  EXPECT_EQ(names.size(), all.size());
  EXPECT_GT(valid, 300);
}

TEST(Family, ConstraintsRejectForTheStatedReason) {
  const auto& f = reg().get("blocktile1d");
  Config c{&f, {64, 64, 8, 3}, false};
  ASSERT_NE(c.violated(), nullptr);
  EXPECT_EQ(c.violated()->name, "tm_divides_bm");
  Config few{&f, {16, 16, 8, 16}, false};  // 16 threads: half a warp
  ASSERT_NE(few.violated(), nullptr);
  EXPECT_EQ(few.violated()->name, "whole_warps");
  Config ok{&f, {64, 64, 8, 8}, false};
  EXPECT_EQ(ok.violated(), nullptr);
}

TEST(LaunchPlan, GridCoversTheMatrixAndThePlanDecidesGuarding) {
  const auto& f = reg().get("blocktile1d");
  Config c{&f, {128, 64, 8, 8}, true};
  LaunchPlan p = planLaunch(c, GemmProblem::packed(1000, 4097, 33));
  ASSERT_TRUE(p.runnable()) << p.refusal;
  ASSERT_EQ(p.launches.size(), 1u);
  EXPECT_EQ(p.launches[0].grid, (Dim3{65, 8, 1}));  // ceil(4097 / 64), ceil(1000 / 128)
  EXPECT_EQ(p.launches[0].block, (Dim3{1024, 1, 1}));
  EXPECT_EQ(p.launches[0].dynamicSmemBytes, (128 + 4 + 64) * 8 * 4);
  EXPECT_EQ(p.launches[0].args, sgemmKernelArgs());
  c.guarded = false;
  EXPECT_TRUE(planLaunch(c, GemmProblem::packed(1024, 1024, 1024)).runnable());
  EXPECT_EQ(planLaunch(c, GemmProblem::packed(1024, 1024, 1020)).refusal,  // K must be a multiple of BK
            "the unguarded form needs M % 128 == N % 64 == K % 8 == 0, got 1024x1024x1020");
  EXPECT_FALSE(planLaunch(c, GemmProblem::packed(1000, 1024, 1024)).runnable());
  EXPECT_TRUE(formFor(c, GemmProblem::packed(1000, 1024, 1024)).guarded);
  EXPECT_FALSE(formFor(c, GemmProblem::packed(1024, 1024, 1024)).guarded);
  const auto& s = reg().get("smem");
  Config bs{&s, {32}, true};
  EXPECT_EQ(s.threadsPerBlock(bs), 1024);
  EXPECT_EQ(s.staticSmemBytes(bs), 8192);
  EXPECT_EQ(planLaunch(bs, GemmProblem::packed(33, 31, 5)).launches.at(0).grid, (Dim3{1, 2, 1}));
}

TEST(LaunchPlan, RefusesWhatNoFormCanRun) {
  Config c = reg().parseName("blocktile1d_bm64_bn64_bk8_tm8_guarded");
  GemmProblem p = GemmProblem::packed(100, 100, 100);
  p.lda = 99;  // below K
  EXPECT_NE(planLaunch(c, p).refusal.find("lda must be at least 100"), std::string::npos);
  GemmProblem huge = GemmProblem::packed(70000, 70000, 70000);  // 4.9e9 elements per operand
  EXPECT_NE(planLaunch(c, huge).refusal.find("2^31"), std::string::npos);
}

TEST(LaunchPlan, VectorFormsNeedAlignedOperands) {
  Config c = reg().parseName("blocktile1d_bm64_bn64_bk8_tm8");
  GemmProblem p = GemmProblem::packed(128, 128, 128);
  EXPECT_TRUE(tiledPlan(c, p, {64, 64, 8, 4}).runnable());
  p.alignB = 4;
  EXPECT_EQ(tiledPlan(c, p, {64, 64, 8, 4}).refusal, "4-float loads need 16-byte aligned A, B and C, got 128x128x128 B+4B");
  p = GemmProblem::packed(128, 128, 128);
  p.ldc = 130;
  EXPECT_NE(tiledPlan(c, p, {64, 64, 8, 4}).refusal.find("multiples of 4"), std::string::npos);
  EXPECT_TRUE(tiledPlan(c, p, {64, 64, 8, 1}).runnable());  // scalar loads take any leading dimension
  EXPECT_EQ(GemmProblem::alignmentOf(0x1000), 16);
  EXPECT_EQ(GemmProblem::alignmentOf(0x1004), 4);
  EXPECT_EQ(GemmProblem::alignmentOf(0x1008), 8);
}

TEST(Family, ParseParamsErrorsNameTheProblem) {
  const auto& f = reg().get("blocktile1d");
  auto msg = [&](const char* p) {
    try {
      reg().parseParams(f, p, false);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(msg("BM=64,BN=64,BK=8"), "missing parameter TM for blocktile1d (needs BM,BN,BK,TM)");
  EXPECT_EQ(msg("BM=64,BN=64,BK=8,TM=8,XX=1"), "unknown parameter 'XX' for blocktile1d (choose from: BM,BN,BK,TM)");
  EXPECT_EQ(msg("BM=64,BN=64,BK=8,TM=-8"), "parameter TM must be a positive integer, got '-8'");
  EXPECT_EQ(msg("BM=64,BN=64,BK=8,TM=8x"), "parameter TM must be a positive integer, got '8x'");
  EXPECT_EQ(msg("BM=64,BM=32,BN=64,BK=8,TM=8"), "parameter BM given twice");
  EXPECT_EQ(msg("BM64"), "parameter 'BM64' is not NAME=VALUE (blocktile1d takes BM,BN,BK,TM)");
  EXPECT_NE(msg("BM=64,BN=64,BK=8,TM=16").find("no error"), std::string::npos);
  EXPECT_EQ(reg().parseParams(f, "bm=64,bn=32,bk=8,tm=4", true).name(), "blocktile1d_bm64_bn32_bk8_tm4_guarded");
}

TEST(LaunchPlan, OperandsNeedATileOfSlackBelow2To31Elements) {
  // Offsets are formed up to one tile past the last row or k step (never dereferenced), in 32 bits.
  Config c = reg().parseName("blocktile1d_bm64_bn64_bk8_tm8_guarded");
  GemmProblem p = GemmProblem::packed(1, 16, 1);
  p.ldb = 1 << 28;  // (K + BK) * ldb = 9 * 2^28 > 2^31 - 1 although B spans 16 elements
  EXPECT_NE(planLaunch(c, p).refusal.find("2^31"), std::string::npos) << planLaunch(c, p).refusal;
  p.ldb = 1 << 20;
  EXPECT_TRUE(planLaunch(c, p).runnable()) << planLaunch(c, p).refusal;
}

TEST(FamilyRegistry, SortsKeepsARepeatedSpecOnceAndRefusesTwoFamiliesOfOneName) {
  Family first = reg().get("smem"), second = reg().get("blocktile1d");
  first.order = 50;  // now after blocktile1d (20)
  FamilyRegistry r({first, second, first});  // the same spec twice, as a link line may enrol it
  EXPECT_EQ(r.choices(), "blocktile1d, smem");
  Family impostor = second;
  impostor.templateFile = "other.cu";
  EXPECT_THROW(FamilyRegistry({second, impostor}), std::logic_error);
}

TEST(Family, TargetConstraintsSeeTheGpu) {
  // warptile's register estimate: 128x128 tiles of 8x8 per thread fit 255 registers per thread,
  // not a GPU that allows 128.
  Config c = reg().parseName("warptile_bm128_bn128_bk8_wm64_wn64_wni2_tm8_tn8_t128");
  GpuSpec gpu;
  gpu.maxRegsPerThread = 255;
  gpu.regsPerBlock = 65536;
  EXPECT_EQ(c.violatedOn(gpu), nullptr);
  gpu.maxRegsPerThread = 128;
  ASSERT_NE(c.violatedOn(gpu), nullptr);
  EXPECT_EQ(c.violatedOn(gpu)->name, "register_estimate");
}

// CUTLASS predicates every access: one form runs every problem, and the grid is the identity
// swizzle's (tiles_m << L, ceil(tiles_n / 2^L)), L the largest group whose threshold holds.
TEST(LaunchPlan, CutlassRunsEveryShapeOnTheSwizzlesGrid) {
  Config c = reg().parseName("cutlass_bm128_bn128_bk8_wm64_wn32_st3_sw1_sk1");
  const Family& f = *c.family;
  EXPECT_EQ(f.threadsPerBlock(c), 256);
  EXPECT_EQ(f.dynamicSmemBytes(c), 3 * (128 + 128) * 8 * 4);
  LaunchPlan p = planLaunch(c, GemmProblem::packed(1000, 1000, 1000));
  ASSERT_TRUE(p.runnable()) << p.refusal;
  EXPECT_EQ(p.launches.at(0).grid, (Dim3{8, 8, 1}));  // blockIdx.x over M, as CUTLASS rasterizes
  EXPECT_EQ(p.launches.at(0).args.size(), sgemmKernelArgs().size() + 1);  // and the split-K locks
  EXPECT_EQ(p.workspaceBytes, 0);  // one slice needs no locks
  EXPECT_FALSE(formFor(c, GemmProblem::packed(17, 33, 7)).guarded);  // the one form runs odd sizes
  GemmProblem odd = GemmProblem::packed(17, 33, 7);
  odd.lda = 9, odd.alignA = 4;  // unaligned rows and base pointer: operand alignment 1 runs them
  EXPECT_TRUE(planLaunch(c, odd).runnable());
  GemmProblem shortLda = GemmProblem::packed(17, 33, 7);
  shortLda.lda = 6;  // the same malformed-problem rule as every tiled family
  EXPECT_EQ(planLaunch(c, shortLda).refusal, malformedProblem(shortLda));
  EXPECT_NE(malformedProblem(shortLda).find("lda must be at least 7"), std::string::npos);
  odd.alignB = 2;
  EXPECT_NE(planLaunch(c, odd).refusal.find("4-byte aligned"), std::string::npos);

  Config sw4 = reg().parseName("cutlass_bm64_bn128_bk8_wm32_wn64_st5_sw4_sk1");
  EXPECT_EQ(planLaunch(sw4, GemmProblem::packed(1000, 1000, 1000)).launches.at(0).grid, (Dim3{16 * 4, 2, 1}));  // 8 column tiles: groups of 4
  EXPECT_EQ(planLaunch(sw4, GemmProblem::packed(257, 129, 65)).launches.at(0).grid, (Dim3{5 * 2, 1, 1}));  // 2 column tiles: groups of 2
  EXPECT_EQ(planLaunch(sw4, GemmProblem::packed(257, 100, 65)).launches.at(0).grid, (Dim3{5, 1, 1}));  // 1 column tile
  EXPECT_EQ(reg().parseName("cutlass_bm64_bn64_bk8_wm32_wn32_st3_sw8_sk1").family, &f);
  EXPECT_EQ(planLaunch(reg().parseName("cutlass_bm64_bn64_bk8_wm32_wn32_st3_sw8_sk1"), GemmProblem::packed(64, 6 * 64, 8))
                .launches.at(0).grid,
            (Dim3{8, 1, 1}));  // 6 column tiles reach group 8's threshold: one group of 8
}

// Serial split-K: the grid's depth is the slice count, the workspace one lock per C tile, and
// every slice count is one program (SPLITK is launch-only: not in the name expression).
TEST(LaunchPlan, CutlassSplitKSlicesAreTheGridDepthAndShareOneProgram) {
  Config one = reg().parseName("cutlass_bm64_bn64_bk8_wm32_wn32_st3_sw4_sk1");
  Config eight = reg().parseName("cutlass_bm64_bn64_bk8_wm32_wn32_st3_sw4_sk8");
  EXPECT_EQ(one.nameExpression(), eight.nameExpression());
  EXPECT_NE(one.name(), eight.name());
  for (auto [m, n, k] : {std::tuple{27, 32, 3523}, std::tuple{1000, 130, 7}, std::tuple{5, 5, 1}}) {
    const LaunchPlan plan = planLaunch(eight, GemmProblem::packed(m, n, k));
    ASSERT_TRUE(plan.runnable()) << plan.refusal;  // K < slices and K = 1 run too: empty slices add zero
    const long long tiles = ((m + 63) / 64) * ((n + 63) / 64);
    EXPECT_EQ(plan.workspaceBytes, tiles * 4) << m << "x" << n << "x" << k;
    EXPECT_EQ(plan.launches.at(0).grid.z, 8u);
    EXPECT_EQ(plan.launches.at(0).args.back(), KernelArg::Workspace);
    EXPECT_EQ(planLaunch(one, GemmProblem::packed(m, n, k)).launches.at(0).grid.z, 1u);
  }
  const Family& f = *one.family;
  const Constraint* tooMany = Config{&f, {64, 64, 8, 32, 32, 3, 4, 65}, false}.violated();
  ASSERT_NE(tooMany, nullptr);
  EXPECT_EQ(tooMany->name, "split_k_slices");
}

// clusterk's default space: tiles of 128x128 and up, 4 to 8 warps, 3 stages, 2 slices (10
// configurations: the main job ran 212 s cold with 34, over its 200 s); smaller tiles fill the GPU
// with blocks instead of a cluster's slices and none came within 3 % of the best at 1024^3.
TEST(LaunchPlan, ClusterKDefaultSpaceIsItsLargeTilesInTwoSlices) {
  const Family& f = reg().get("clusterk");  // BM BN BK WM WN STAGES SWIZZLE SPLITK
  std::vector<std::string> valid;
  for (const Config& c : FamilyRegistry::enumerate(f, false))
    if (!c.violated()) valid.push_back(c.name());
  EXPECT_EQ(valid.size(), 10u) << fmt::format("{}", fmt::join(valid, " "));
  for (const std::string& name : valid) {
    const Config c = reg().parseName(name);
    EXPECT_GE(c["BM"] * c["BN"], 128 * 128) << name;
    EXPECT_EQ(c["STAGES"], 3) << name;
    EXPECT_EQ(c["SPLITK"], 2) << name;
  }
  const Constraint* small = Config{&f, {64, 128, 8, 32, 64, 3, 4, 2}, false}.violated();
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(small->name, "large_tiles");
}

TEST(LaunchPlan, CutlassConstraintsFollowItsKernelList) {
  const Family& f = reg().get("cutlass");
  auto violated = [&](std::vector<int> v) {
    const Constraint* c = Config{&f, std::move(v), false}.violated();
    return c ? c->name : std::string("none");
  };
  EXPECT_EQ(violated({64, 64, 8, 64, 64, 3, 1, 1}), "four_to_eight_warps");
  EXPECT_EQ(violated({128, 128, 8, 64, 32, 2, 1, 1}), "multistage");
  EXPECT_EQ(violated({128, 128, 8, 64, 32, 3, 3, 1}), "swizzle_group");
  EXPECT_EQ(violated({128, 128, 8, 64, 32, 3, 1, 1}), "none");
  // The two 1×8 warp arrangements of the default space computed wrong results on an H100.
  EXPECT_EQ(violated({32, 256, 8, 32, 32, 3, 4, 1}), "at_most_four_warp_columns");
  EXPECT_EQ(violated({64, 256, 8, 64, 32, 5, 4, 1}), "at_most_four_warp_columns");
  EXPECT_EQ(violated({256, 32, 8, 32, 32, 3, 4, 1}), "none");  // 8×1 verified on the same GPU
}

TEST(HeaderTrees, CutlassVersionIsReadFromItsHeader) {
  EXPECT_EQ(cutlassVersionFromHeader("#define CUTLASS_MAJOR 4\n#define CUTLASS_MINOR 2\n#define CUTLASS_PATCH 0\n"), "4.2.0");
  EXPECT_EQ(cutlassVersionFromHeader("#define CUTLASS_MAJOR 4\n"), "");
  EXPECT_EQ(cutlassVersionFromHeader("#define CUTLASS_MAJOR 99999999999\n#define CUTLASS_MINOR 2\n#define CUTLASS_PATCH 0"), "");
}

TEST(HeaderTrees, ATreesVersionMovesTheSourceHashItsPathDoesNot) {
  CompileUnit plain{"__global__ void k() {}", {"k"}, {}, {}};
  CompileUnit v420 = plain, v430 = plain;
  v420.headerTrees = {"cutlass 4.2.0"};
  v430.headerTrees = {"cutlass 4.3.0"};
  EXPECT_NE(plain.sourceHash(), v420.sourceHash());
  EXPECT_NE(v420.sourceHash(), v430.sourceHash());
  CompileUnit elsewhere = v420;
  elsewhere.options = {"-I/somewhere/else"};
  EXPECT_EQ(elsewhere.sourceHash(), v420.sourceHash());
}

// thin: row tiles on the grid's x (a skinny C has many), K slices on z, and a workspace of one
// counter per tile (rounded up to 64) plus every slice's partial tile; one program for every
// slice count; a split whose partial sums would pass 64 MiB is refused with the numbers.
TEST(LaunchPlan, ThinSplitsKIntoPartialTilesAndRefusesHugeWorkspaces) {
  Config one = reg().parseName("thin_bm64_bn16_bk32_tm4_tn4_st4_sk1_guarded");
  Config four = reg().parseName("thin_bm64_bn16_bk32_tm4_tn4_st4_sk4_guarded");
  EXPECT_EQ(one.nameExpression(), four.nameExpression());
  EXPECT_EQ(one.family->threadsPerBlock(one), 64);
  for (auto [m, n, k] : {std::tuple{2429, 22, 4103}, std::tuple{1, 1, 1}, std::tuple{65, 17, 3}}) {
    const LaunchPlan plan = planLaunch(four, GemmProblem::packed(m, n, k));
    ASSERT_TRUE(plan.runnable()) << plan.refusal;  // K below the slice count too: empty slices add zero
    const long long tilesM = (m + 63) / 64, tilesN = (n + 15) / 16, tiles = tilesM * tilesN;
    EXPECT_EQ(plan.launches.at(0).grid, (Dim3{unsigned(tilesM), unsigned(tilesN), 4u})) << m << "x" << n << "x" << k;
    EXPECT_EQ(plan.workspaceBytes, 4 * ((tiles + 63) / 64 * 64 + 4 * tiles * 64 * 16));
    EXPECT_EQ(plan.launches.at(0).args.back(), KernelArg::Workspace);
    const LaunchPlan single = planLaunch(one, GemmProblem::packed(m, n, k));
    EXPECT_EQ(single.launches.at(0).grid.z, 1u);
    EXPECT_EQ(single.workspaceBytes, 0);
  }
  // 4096² in 64×16 tiles: 16 384 tiles × 4 slices × 4 KiB = 256 MiB of partial sums, and the
  // counters: just over 256 MiB, which the message rounds up.
  const LaunchPlan huge = planLaunch(four, GemmProblem::packed(4096, 4096, 4096));
  EXPECT_FALSE(huge.runnable());
  EXPECT_NE(huge.refusal.find("need 257 MiB of partial sums"), std::string::npos) << huge.refusal;
  EXPECT_TRUE(planLaunch(one, GemmProblem::packed(4096, 4096, 4096)).runnable());
  // The unguarded form needs whole tiles, and float4 operands.
  Config unguarded = four;
  unguarded.guarded = false;
  EXPECT_TRUE(planLaunch(unguarded, GemmProblem::packed(128, 32, 1024)).runnable());
  EXPECT_FALSE(planLaunch(unguarded, GemmProblem::packed(128, 32, 1000)).runnable());
}

TEST(LaunchPlan, ThinConstraintsKeepTilesSmallAndFragmentsReadable) {
  const Family& f = reg().get("thin");
  auto violated = [&](std::vector<int> v) {
    const Constraint* c = Config{&f, std::move(v), false}.violated();
    return c ? c->name : std::string("none");
  };
  EXPECT_EQ(violated({64, 16, 32, 4, 4, 4, 4}), "none");
  EXPECT_EQ(violated({8, 128, 32, 1, 4, 4, 1}), "none");  // 256 threads, one row each: M = 1 to 8
  EXPECT_EQ(violated({64, 16, 32, 4, 3, 4, 1}), "sub_tiles_fit");
  EXPECT_EQ(violated({64, 24, 32, 4, 3, 4, 1}), "b_fragments");
  EXPECT_EQ(violated({128, 128, 32, 8, 8, 4, 1}), "small_tiles");
  EXPECT_EQ(violated({16, 16, 32, 4, 2, 4, 1}), "two_to_eight_warps");  // 32 threads: one warp
  EXPECT_EQ(violated({64, 64, 32, 8, 4, 4, 1}), "results_per_thread");  // 32 accumulators per thread
  EXPECT_EQ(violated({64, 16, 32, 4, 4, 1, 1}), "pipeline_stages");
  EXPECT_EQ(violated({64, 16, 32, 4, 4, 4, 65}), "split_k_slices");
}
