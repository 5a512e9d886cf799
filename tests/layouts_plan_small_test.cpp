// Layouts (nn, nt, tn, tt) and batches in the plans of the smem, blocktile1d, blocktile2d and
// thin families: every layout plans like nn (the tiles decide the form, the layout the shared
// memory), batches take grid z (thin: batch-major layers of K slices, and a workspace region per
// batch), and what cannot run is refused with the numbers. The last tests compile each family's
// classic configuration in every layout and form with NVRTC, and check that the templates' padded
// shared-memory strides are the ones the specs size the launch for.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "Compiler.hpp"
#include "FamilyRegistry.hpp"
#include "NvrtcCompiler.hpp"

using namespace gemmtune;

namespace {

const FamilyRegistry& reg() { return FamilyRegistry::builtin(); }

// The classic configuration of each family this file covers, unguarded (thin with 4 K slices).
const std::vector<std::string>& classics() {
  static const std::vector<std::string> names = {"smem_bs32", "blocktile1d_bm64_bn64_bk8_tm8",
                                                 "blocktile2d_bm128_bn128_bk8_tm8_tn8",
                                                 "thin_bm64_bn16_bk32_tm4_tn4_st4_sk4"};
  return names;
}

GemmProblem packed(long long m, long long n, long long k, Layout layout, long long batch = 1) {
  return GemmProblem::packed(GemmShape{m, n, k, layout, batch});
}

Config withLayout(const std::string& name, Layout layout, bool guarded = false) {
  Config c = reg().parseName(name);
  c.layout = layout;
  c.guarded = guarded;
  return c;
}

}  // namespace

// Where the tiles divide the problem, every layout runs the unguarded form on nn's grid (no
// family refuses a layout any more); where they do not, the guarded form runs it.
TEST(LayoutPlans, EveryLayoutPlansLikeNn) {
  for (const std::string& name : classics())
    for (const Layout& layout : Layout::all()) {
      const GemmProblem whole = packed(256, 256, 256, layout), odd = packed(255, 97, 33, layout);
      const Config c = formFor(reg().parseName(name), whole);
      EXPECT_EQ(c.layout, layout) << name;
      EXPECT_FALSE(c.guarded) << name << " " << layout.text();
      const LaunchPlan plan = planLaunch(c, whole), nn = planLaunch(reg().parseName(name), packed(256, 256, 256, {}));
      ASSERT_TRUE(plan.runnable()) << name << " " << layout.text() << ": " << plan.refusal;
      EXPECT_EQ(plan.launches.at(0).grid, nn.launches.at(0).grid) << name << " " << layout.text();
      const Config oddForm = formFor(reg().parseName(name), odd);
      EXPECT_TRUE(oddForm.guarded) << name << " " << layout.text();
      EXPECT_TRUE(planLaunch(oddForm, odd).runnable()) << name << " " << layout.text() << ": "
                                                       << planLaunch(oddForm, odd).refusal;
    }
}

// The float4 families' unguarded form needs lda, ldb, ldc multiples of 4 in every layout, also
// where a transposed operand is loaded along m or n; the guarded form takes any.
TEST(LayoutPlans, VectorFormsNeedAlignedLeadingDimensionsInEveryLayout) {
  for (const char* name : {"blocktile2d_bm128_bn128_bk8_tm8_tn8", "thin_bm64_bn16_bk32_tm4_tn4_st4_sk1"})
    for (const Layout& layout : Layout::all()) {
      GemmProblem p = packed(256, 256, 256, layout);
      p.lda = 258;  // >= 256 whichever dimension A's rows hold
      const Config c = withLayout(name, layout);
      EXPECT_NE(planLaunch(c, p).refusal.find("lda, ldb, ldc multiples of 4"), std::string::npos) << name << " " << layout.text();
      EXPECT_TRUE(formFor(c, p).guarded);
      EXPECT_TRUE(planLaunch(formFor(c, p), p).runnable()) << name << " " << layout.text();
    }
}

// A transposed operand's stored rows are checked for 32-bit reach (K rows of A for op(A) = T):
// the same one-tile slack, per stored rows, in the transposed layouts.
TEST(LayoutPlans, TransposedOperandsReachIsCountedInTheirStoredRows) {
  const Config c = withLayout("blocktile1d_bm64_bn64_bk8_tm8", Layout{true, false}, true);
  GemmProblem p = packed(16, 16, 1, Layout{true, false});
  p.lda = 1 << 28;  // A is 1 row of 16: (K + BK) * lda = 9 * 2^28 passes 2^31
  EXPECT_NE(planLaunch(c, p).refusal.find("2^31"), std::string::npos) << planLaunch(c, p).refusal;
  p.lda = 1 << 20;
  EXPECT_TRUE(planLaunch(c, p).runnable()) << planLaunch(c, p).refusal;
}

// Transposed operands go through padded tiles: the launch's shared memory follows the layout.
TEST(LayoutPlans, SharedMemoryFollowsTheLayout) {
  const Layout nn{}, nt{false, true}, tn{true, false}, tt{true, true};
  const Family& smem = reg().get("smem");
  // BLOCKSIZE 32: a transposed A's tile has rows of 36 floats, a transposed B's of 33.
  EXPECT_EQ(smem.staticSmemBytes(withLayout("smem_bs32", nn)), 2 * 32 * 32 * 4);
  EXPECT_EQ(smem.staticSmemBytes(withLayout("smem_bs32", nt)), (32 * 32 + 32 * 33) * 4);
  EXPECT_EQ(smem.staticSmemBytes(withLayout("smem_bs32", tn)), (32 * 36 + 32 * 32) * 4);
  EXPECT_EQ(smem.staticSmemBytes(withLayout("smem_bs32", tt)), (32 * 36 + 32 * 33) * 4);
  const Family& bt1 = reg().get("blocktile1d");
  // B's rows for op T: BN padded up to 32 / BK columns past a multiple of 32 (one for BK >= 32).
  EXPECT_EQ(bt1.dynamicSmemBytes(withLayout("blocktile1d_bm64_bn64_bk8_tm8", nn)), (64 + 4 + 64) * 8 * 4);
  EXPECT_EQ(bt1.dynamicSmemBytes(withLayout("blocktile1d_bm64_bn64_bk8_tm8", tn)), (64 + 4 + 64) * 8 * 4);
  EXPECT_EQ(bt1.dynamicSmemBytes(withLayout("blocktile1d_bm64_bn64_bk8_tm8", nt)), (64 + 4 + 68) * 8 * 4);
  EXPECT_EQ(bt1.dynamicSmemBytes(withLayout("blocktile1d_bm64_bn32_bk16_tm4", tt)), (64 + 4 + 34) * 16 * 4);
  EXPECT_EQ(bt1.dynamicSmemBytes(withLayout("blocktile1d_bm32_bn64_bk32_tm2", nt)), (32 + 4 + 65) * 32 * 4);
  EXPECT_EQ(bt1.dynamicSmemBytes(withLayout("blocktile1d_bm32_bn16_bk4_tm1", nt)), (32 + 4 + 40) * 4 * 4);
  const Family& bt2 = reg().get("blocktile2d");
  EXPECT_EQ(bt2.dynamicSmemBytes(withLayout("blocktile2d_bm128_bn128_bk8_tm8_tn8", tn)), (128 + 4 + 128) * 8 * 4);
  EXPECT_EQ(bt2.dynamicSmemBytes(withLayout("blocktile2d_bm128_bn128_bk8_tm8_tn8", tt)), (128 + 4 + 132) * 8 * 4);
  const Family& thin = reg().get("thin");
  // B's rows for op T: four times an odd number of floats, at least BN + 4.
  EXPECT_EQ(thin.dynamicSmemBytes(withLayout("thin_bm64_bn16_bk32_tm4_tn4_st4_sk4", tn)), 4 * (64 * 36 + 32 * 16) * 4 + 16);
  EXPECT_EQ(thin.dynamicSmemBytes(withLayout("thin_bm64_bn16_bk32_tm4_tn4_st4_sk4", nt)), 4 * (64 * 36 + 32 * 20) * 4 + 16);
  EXPECT_EQ(thin.dynamicSmemBytes(withLayout("thin_bm64_bn4_bk32_tm1_tn4_st2_sk1", tt)), 2 * (64 * 36 + 32 * 12) * 4 + 16);
  EXPECT_EQ(thin.dynamicSmemBytes(withLayout("thin_bm32_bn12_bk32_tm1_tn4_st2_sk1", nt)), 2 * (32 * 36 + 32 * 20) * 4 + 16);
  // The plan launches with the configuration's own shared memory.
  const Config c = withLayout("thin_bm64_bn16_bk32_tm4_tn4_st4_sk4", nt);
  EXPECT_EQ(planLaunch(c, packed(64, 16, 4096, nt)).launches.at(0).dynamicSmemBytes, thin.dynamicSmemBytes(c));
}

// smem, blocktile1d and blocktile2d: one grid layer per batch (the kernels read blockIdx.z as
// the batch), as many as one launch has.
TEST(BatchPlans, OneGridLayerPerBatch) {
  for (const std::string& name : classics())
    for (const Layout& layout : Layout::all()) {
      if (name.rfind("thin", 0) == 0) continue;
      const LaunchPlan plan = planLaunch(withLayout(name, layout), packed(256, 128, 512, layout, 24));
      ASSERT_TRUE(plan.runnable()) << name << ": " << plan.refusal;
      EXPECT_EQ(plan.launches.at(0).grid.z, 24u) << name;
      EXPECT_EQ(plan.workspaceBytes, 0) << name;
      const Config guarded = withLayout(name, layout, true);
      EXPECT_EQ(planLaunch(guarded, packed(3, 5, 7, layout, 65535)).launches.at(0).grid.z, 65535u) << name;
      EXPECT_NE(planLaunch(guarded, packed(3, 5, 7, layout, 65536)).refusal.find("more than 65535 batches"), std::string::npos)
          << name;
    }
}

// thin: grid z is batch-major, batch * slices + slice, and every batch has its own counters and
// partial sums: the workspace is one batch's times the batch count.
TEST(BatchPlans, ThinStacksEveryBatchsKSlicesOnGridZ) {
  for (const Layout& layout : Layout::all())
    for (auto [m, n, k, batch] : {std::tuple{2429, 22, 4103, 3}, std::tuple{1, 1, 1, 7}, std::tuple{65, 17, 3, 2}}) {
      const Config four = withLayout("thin_bm64_bn16_bk32_tm4_tn4_st4_sk4", layout, true);
      const LaunchPlan plan = planLaunch(four, packed(m, n, k, layout, batch));
      ASSERT_TRUE(plan.runnable()) << plan.refusal;
      const long long tilesM = (m + 63) / 64, tilesN = (n + 15) / 16, tiles = tilesM * tilesN;
      EXPECT_EQ(plan.launches.at(0).grid, (Dim3{unsigned(tilesM), unsigned(tilesN), unsigned(4 * batch)}));
      EXPECT_EQ(plan.workspaceBytes, batch * 4 * ((tiles + 63) / 64 * 64 + 4 * tiles * 64 * 16));
      EXPECT_EQ(plan.launches.at(0).args.back(), KernelArg::Workspace);
      const LaunchPlan single = planLaunch(withLayout("thin_bm64_bn16_bk32_tm4_tn4_st4_sk1", layout, true),
                                           packed(m, n, k, layout, batch));
      EXPECT_EQ(single.launches.at(0).grid.z, unsigned(batch));
      EXPECT_EQ(single.workspaceBytes, 0);  // one slice writes C itself
    }
}

TEST(BatchPlans, ThinRefusesMoreGridLayersOrWorkspaceThanOneLaunchHas) {
  const Config one = withLayout("thin_bm64_bn16_bk32_tm4_tn4_st4_sk1", {}, true);
  const Config two = withLayout("thin_bm64_bn16_bk32_tm4_tn4_st4_sk2", {}, true);
  EXPECT_TRUE(planLaunch(one, packed(64, 16, 64, {}, 65535)).runnable());  // one slice: one layer per batch
  // 65534 layers are not too many (their 32767 workspace regions are too much); 65536 are.
  EXPECT_EQ(planLaunch(two, packed(64, 16, 64, {}, 32767)).refusal.find("grid layers"), std::string::npos);
  const GemmProblem deep = packed(64, 16, 64, {}, 32768);
  EXPECT_EQ(planLaunch(two, deep).refusal,
            deep.text() + ": 32768 batches of 2 K slices need 65536 grid layers (at most 65535 in one launch)");
  // One tile: 64 counter slots and 4 partial tiles of 64×16 floats, 16 640 bytes per batch; 4032
  // batches fit in 64 MiB, 4033 do not.
  const Config four = withLayout("thin_bm64_bn16_bk32_tm4_tn4_st4_sk4", {}, true);
  const LaunchPlan fits = planLaunch(four, packed(64, 16, 4096, {}, 4032));
  ASSERT_TRUE(fits.runnable()) << fits.refusal;
  EXPECT_EQ(fits.workspaceBytes, 4032LL * 16640);
  const LaunchPlan tooMuch = planLaunch(four, packed(64, 16, 4096, {}, 4033));
  // Just over the limit reads as over it: the MiB are rounded up (64 MiB and 16 640 bytes: "65").
  EXPECT_NE(tooMuch.refusal.find("4033 batches of 4 K slices of 1 tiles need 65 MiB of partial sums (at most 64 MiB"),
            std::string::npos)
      << tooMuch.refusal;
  // Unbatched, the message names no batches (as before batches).
  const LaunchPlan huge = planLaunch(four, packed(4096, 4096, 4096, {}));
  EXPECT_NE(huge.refusal.find(": 4 K slices of 16384 tiles need 257 MiB"), std::string::npos) << huge.refusal;
}

// Pointer arrays are read on the device, so every matrix counts as 4-byte aligned: the float4
// families run their guarded form, the scalar ones either.
TEST(BatchPlans, PointerArraysRunTheGuardedFormOfVectorFamilies) {
  for (const std::string& name : classics()) {
    GemmProblem p = packed(256, 256, 256, Layout{true, true}, 5);
    p.pointerArrays = true;
    p.alignA = p.alignB = p.alignC = 4;
    const Config c = formFor(reg().parseName(name), p);
    const bool vector = name.rfind("blocktile2d", 0) == 0 || name.rfind("thin", 0) == 0;
    EXPECT_EQ(c.guarded, vector) << name;
    const LaunchPlan plan = planLaunch(c, p);
    ASSERT_TRUE(plan.runnable()) << name << ": " << plan.refusal;
    EXPECT_EQ(plan.launches.at(0).grid.z, name.rfind("thin", 0) == 0 ? 20u : 5u) << name;
  }
}

// Every classic configuration compiles for sm_90 in every layout and form, without spills.
TEST(LayoutCompiles, ClassicsCompileInEveryLayoutAndFormWithoutSpills) {
  CompilerOptions options;
  options.cacheDir.clear();  // no disk cache: really compile
  options.jobs = 2;
  Compiler compiler(options);
  std::vector<Config> configs;
  for (const std::string& name : classics())
    for (const Layout& layout : Layout::all())
      for (bool guarded : {false, true}) configs.push_back(withLayout(name, layout, guarded));
  const std::vector<CompileResult> results = compiler.compileAll(configs, "sm_90");
  for (size_t i = 0; i < configs.size(); ++i) {
    ASSERT_TRUE(results[i].ok) << configs[i].name() << "\n" << results[i].log;
    EXPECT_EQ(results[i].resources.spillStoreBytes + results[i].resources.spillLoadBytes, 0) << configs[i].name();
    EXPECT_EQ(results[i].resources.staticSmemBytes, configs[i].family->staticSmemBytes(configs[i])) << configs[i].name();
  }
}

// The padded strides the templates index with are the ones the specs size shared memory for:
// NVRTC evaluates the templates' own stride functions against the specs' numbers.
TEST(LayoutCompiles, TemplatesPadTransposedTilesAsTheSpecsSizeThem) {
  CompilerOptions options;
  options.cacheDir.clear();
  Compiler compiler(options);
  std::string bt1Checks, thinChecks;
  for (const char* name : {"blocktile1d_bm64_bn64_bk8_tm8", "blocktile1d_bm64_bn32_bk16_tm4", "blocktile1d_bm32_bn64_bk32_tm2",
                           "blocktile1d_bm32_bn16_bk4_tm1", "blocktile1d_bm16_bn256_bk64_tm4", "blocktile1d_bm32_bn48_bk8_tm2"}) {
    const Config c = withLayout(name, Layout{false, true});
    const int strideB = c.family->dynamicSmemBytes(c) / (4 * c["BK"]) - c["BM"] - 4;
    bt1Checks += "static_assert(gemmtune_blocktile1d_stride_b(" + std::to_string(c["BN"]) + ", " + std::to_string(c["BK"]) +
                 ") == " + std::to_string(strideB) + ", \"" + name + "\");\n";
  }
  for (const char* name : {"thin_bm64_bn16_bk32_tm4_tn4_st4_sk4", "thin_bm64_bn4_bk32_tm1_tn4_st2_sk1",
                           "thin_bm32_bn12_bk32_tm1_tn4_st2_sk1", "thin_bm8_bn128_bk32_tm1_tn4_st4_sk1"}) {
    const Config c = withLayout(name, Layout{true, true});
    const int stage = (c.family->dynamicSmemBytes(c) - 16) / (4 * c["STAGES"]);
    const int strideB = (stage - c["BM"] * (c["BK"] + 4)) / c["BK"];
    thinChecks += "static_assert(gemmtune_thin_stride_b(" + std::to_string(c["BN"]) + ") == " + std::to_string(strideB) +
                  ", \"" + name + "\");\n";
  }
  for (auto [name, checks] : {std::pair{"blocktile1d_bm64_bn64_bk8_tm8", bt1Checks}, std::pair{"thin_bm64_bn16_bk32_tm4_tn4_st4_sk4", thinChecks}}) {
    CompileUnit unit = compiler.unit(reg().parseName(name));
    unit.source += checks;
    const CompileResult r = NvrtcCompiler::compile(unit, "sm_90");
    EXPECT_TRUE(r.ok) << name << "\n" << checks << r.log;
  }
}
