// Launch plans of the warp-tiled families (warptile, warppipe) for every layout and for batches:
// what runs unguarded, what falls back to the guarded form, what no form runs, the grid (batches
// in z), the shared memory each layout's template declares, and instance names with layouts.
// The kernels themselves are checked on a GPU (worker verification); this is the CPU side.
#include <gtest/gtest.h>

#include <string>

#include "FamilyRegistry.hpp"

using namespace gemmtune;

namespace {

// The plan of `config` compiled for the problem's layout (planLaunch refuses another layout).
LaunchPlan planFor(Config config, const GemmProblem& problem) {
  config.layout = problem.layout;
  return planLaunch(config, problem);
}

const FamilyRegistry& reg() { return FamilyRegistry::builtin(); }

// The classic configurations (unguarded): 128x128 tiles of BK 8, 256 threads; warppipe 3 stages.
const char* const kClassics[] = {"warptile_bm128_bn128_bk8_wm64_wn32_wni2_tm4_tn4_t256",
                                 "warppipe_bm128_bn128_bk8_wm64_wn32_wni2_tm4_tn4_t256_st3"};
const Layout kNt{false, true}, kTn{true, false}, kTt{true, true};

GemmProblem problem(long long m, long long n, long long k, Layout layout, long long batch = 1) {
  return GemmProblem::packed(GemmShape{m, n, k, layout, batch});
}

// Floats of one k tile in shared memory: A in BK rows of BM + 4, B in BK rows of BN (+ 4 when B
// is stored with k contiguous, op(B) = T: its copies scatter along k like A's).
int stageBytes(Layout layout) { return 8 * (128 + 4 + 128 + (layout.transB ? 4 : 0)) * 4; }
int stages(const Config& c) { return c.family->name == "warppipe" ? c["STAGES"] : 2; }

}  // namespace

TEST(WarpLayouts, PackedBatchesOfEveryLayoutRunUnguardedWithOneGridLayerPerBatch) {
  for (const char* name : kClassics)
    for (Layout layout : {kNt, kTn, kTt}) {
      SCOPED_TRACE(std::string(name) + " " + layout.text());
      const GemmProblem p = problem(1024, 512, 256, layout, 3);
      const Config c = formFor(reg().parseName(name), p);
      EXPECT_FALSE(c.guarded);
      EXPECT_EQ(c.layout, layout);
      const LaunchPlan plan = planFor(c, p);
      ASSERT_TRUE(plan.runnable()) << plan.refusal;
      ASSERT_EQ(plan.launches.size(), 1u);
      const KernelLaunch& k = plan.launches[0];
      EXPECT_EQ(k.grid, (Dim3{512 / 128, 1024 / 128, 3}));  // x over N, y over M, z over the batches
      EXPECT_EQ(k.block, (Dim3{256, 1, 1}));
      EXPECT_EQ(k.dynamicSmemBytes, stages(c) * stageBytes(layout));
      EXPECT_EQ(k.args, sgemmKernelArgs());
      EXPECT_EQ(plan.workspaceBytes, 0);
    }
}

TEST(WarpLayouts, SharedMemoryPadsBRowsOnlyWhereBIsStoredWithKContiguous) {
  for (const char* name : kClassics) {
    Config c = reg().parseName(name);
    const Family& f = *c.family;
    for (Layout layout : Layout::all()) {
      c.layout = layout;
      EXPECT_EQ(f.dynamicSmemBytes(c), stages(c) * stageBytes(layout)) << name << " " << layout.text();
      EXPECT_EQ(f.staticSmemBytes(c), 0);
    }
  }
  Config pipe = reg().parseName(kClassics[1]);
  pipe.layout = kTt;
  EXPECT_EQ(pipe.family->dynamicSmemBytes(pipe), 3 * 8 * (128 + 4 + 128 + 4) * 4);  // 25344 B
  pipe.layout = kTn;
  EXPECT_EQ(pipe.family->dynamicSmemBytes(pipe), 3 * 8 * (128 + 4 + 128) * 4);  // 24960 B, as nn
}

TEST(WarpLayouts, OddSizesOfEveryLayoutRunGuardedWithTheGridRoundedUp) {
  for (const char* name : kClassics)
    for (Layout layout : Layout::all()) {
      SCOPED_TRACE(std::string(name) + " " + layout.text());
      const GemmProblem p = problem(1000, 257, 37, layout, 3);
      const Config c = formFor(reg().parseName(name), p);
      EXPECT_TRUE(c.guarded);
      const LaunchPlan plan = planFor(c, p);
      ASSERT_TRUE(plan.runnable()) << plan.refusal;
      EXPECT_EQ(plan.launches.at(0).grid, (Dim3{3, 8, 3}));  // ceil(257 / 128), ceil(1000 / 128)
      const LaunchPlan one = planFor(c, problem(1, 1, 1, layout));
      ASSERT_TRUE(one.runnable()) << one.refusal;
      EXPECT_EQ(one.launches.at(0).grid, (Dim3{1, 1, 1}));
    }
}

TEST(WarpLayouts, TheUnguardedFormRefusesLeadingDimensionsAndAlignmentsItCannotLoadAsFloat4) {
  for (const char* name : kClassics)
    for (Layout layout : Layout::all()) {
      SCOPED_TRACE(std::string(name) + " " + layout.text());
      Config c = reg().parseName(name);
      c.layout = layout;
      GemmProblem p = problem(256, 256, 256, layout, 3);
      ASSERT_TRUE(planFor(c, p).runnable());

      GemmProblem oddLda = p;
      oddLda.lda = 257;  // at least the stored row length (256) in every layout, but not float4 rows
      oddLda.strideA = 256 * 257;
      EXPECT_EQ(planFor(c, oddLda).refusal,
                "4-float loads need lda, ldb, ldc multiples of 4, got " + oddLda.text());
      EXPECT_TRUE(formFor(c, oddLda).guarded);
      EXPECT_TRUE(planFor(formFor(c, oddLda), oddLda).runnable());

      GemmProblem oddStride = p;
      oddStride.alignB = 4;  // batch b's B starts at B + b·strideB: a stride of 2 mod 4 floats
      EXPECT_EQ(planFor(c, oddStride).refusal,
                "4-float loads need 16-byte aligned A, B and C, got " + oddStride.text());
      EXPECT_TRUE(formFor(c, oddStride).guarded);

      GemmProblem arrays = p;
      arrays.pointerArrays = true;  // not read on the host: 4-byte aligned as far as the plan knows
      arrays.alignA = arrays.alignB = arrays.alignC = 4;
      EXPECT_FALSE(planFor(c, arrays).runnable());
      const Config guarded = formFor(c, arrays);
      EXPECT_TRUE(guarded.guarded);
      const LaunchPlan plan = planFor(guarded, arrays);
      ASSERT_TRUE(plan.runnable()) << plan.refusal;
      EXPECT_EQ(plan.launches.at(0).grid.z, 3u);

      GemmProblem ragged = problem(256, 256, 252, layout);  // K not a multiple of BK = 8
      EXPECT_EQ(planFor(c, ragged).refusal,
                "the unguarded form needs M % 128 == N % 128 == K % 8 == 0, got " + ragged.text());
    }
}

TEST(WarpLayouts, NoFormRunsLeadingDimensionsBelowTheStoredRowLength) {
  // Stored row lengths: A K (op N) or M (op T); B N (op N) or K (op T). M = 64, N = 48, K = 32.
  struct Case {
    Layout layout;
    long long lda, ldb;
    const char* message;
  };
  const Case cases[] = {
      {Layout{}, 31, 48, "lda must be at least 32"}, {kTn, 63, 48, "lda must be at least 64"},
      {kTn, 64, 47, "ldb must be at least 48"},      {kNt, 32, 31, "ldb must be at least 32"},
      {kTt, 64, 31, "ldb must be at least 32"},
  };
  for (const char* name : kClassics) {
    Config c = reg().parseName(std::string(name) + "_guarded");
    for (const Case& k : cases) {
      GemmProblem p = problem(64, 48, 32, k.layout);
      c.layout = k.layout;
      ASSERT_TRUE(planFor(c, p).runnable()) << planFor(c, p).refusal;
      p.lda = k.lda, p.ldb = k.ldb;
      EXPECT_NE(planFor(c, p).refusal.find(k.message), std::string::npos)
          << name << " " << k.layout.text() << ": " << planFor(c, p).refusal;
    }
  }
}

TEST(WarpLayouts, ReachIsCheckedOnTheRowsEachLayoutStores) {
  // 32-bit offsets: (stored rows + a tile) · ld must stay below 2^31. A stored K rows of M
  // (op T): (K + BK) · lda, whatever M; B stored N rows of K (op T): (N + BN) · ldb. M = N = 16,
  // K = 1: (1 + 8) · 2^28 and (16 + 128) · 2^24 are past 2^31 - 1, 2^20 rows fit either way.
  struct Case {
    Layout layout;
    long long GemmProblem::*ld;
    long long tooLong;
  };
  Config c = reg().parseName(std::string(kClassics[0]) + "_guarded");
  for (const Case& k : {Case{kTn, &GemmProblem::lda, 1LL << 28}, Case{kNt, &GemmProblem::ldb, 1LL << 24}}) {
    c.layout = k.layout;
    GemmProblem p = problem(16, 16, 1, k.layout);
    p.*k.ld = k.tooLong;
    EXPECT_NE(planFor(c, p).refusal.find("2^31"), std::string::npos) << k.layout.text() << ": " << planFor(c, p).refusal;
    p.*k.ld = 1 << 20;
    EXPECT_TRUE(planFor(c, p).runnable()) << k.layout.text() << ": " << planFor(c, p).refusal;
  }
}

TEST(WarpLayouts, MoreBatchesThanOneGridLayerPerBatchAllowsAreRefused) {
  for (const char* name : kClassics) {
    const Config c = reg().parseName(std::string(name) + "_guarded");
    EXPECT_TRUE(planFor(c, problem(8, 8, 8, kTt, 65535)).runnable());
    EXPECT_NE(planFor(c, problem(8, 8, 8, kTt, 65536)).refusal.find("more than 65535 batches"), std::string::npos);
  }
}

TEST(WarpLayouts, InstanceNamesCarryTheLayoutAndRoundTrip) {
  for (const char* name : kClassics)
    for (Layout layout : Layout::all())
      for (bool guarded : {false, true}) {
        Config c = reg().parseName(name);
        c.layout = layout, c.guarded = guarded;
        const std::string n = c.name();
        std::string suffix = layout == Layout{} ? "" : "_" + layout.text();
        if (guarded) suffix += "_guarded";
        EXPECT_EQ(n, name + suffix);
        const Config back = reg().parseName(n);
        EXPECT_EQ(back, c) << n;
        const std::string flags = std::string(guarded ? "true" : "false") + "," + (layout.transA ? "true" : "false") +
                                  "," + (layout.transB ? "true" : "false") + ">";
        EXPECT_EQ(c.nameExpression().substr(c.nameExpression().size() - flags.size()), flags) << c.nameExpression();
      }
  EXPECT_EQ(reg().parseName("warppipe_bm64_bn64_bk16_wm32_wn32_wni1_tm8_tn4_t128_st4_tt_guarded").nameExpression(),
            "sgemm_warppipe<64,64,16,32,32,1,8,4,128,4,true,true,true>");
}
