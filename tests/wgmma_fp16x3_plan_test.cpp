// The wgmmafp16x3 family (no GPU): fp16x3's eight launches around its own GEMM, whose grid is one
// block per BM × BN tile in x (batches in z); compiled for sm_90a whatever the GPU asks, and kept
// off every GPU but sm_90 by its target constraint and by `gemmtune ptx`.
// Run: ctest -R WgmmaFp16x3
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "CliRunner.hpp"
#include "Compiler.hpp"
#include "FamilyPlans.hpp"
#include "FamilyRegistry.hpp"
#include "GpuProfiles.hpp"

using namespace gemmtune;

namespace {

const char* kClassic = "wgmmafp16x3_bm128_bn256_sn64_st4_rs1_gr8";

const GpuSpec& profile(const char* key) { return findGpuProfile(key)->spec; }

GemmProblem problem(long long m, long long n, long long k, long long batch = 1) {
  return GemmProblem::packed(GemmShape{m, n, k, Layout{}, batch});
}

}  // namespace

TEST(WgmmaFp16x3, TheGemmRunsOneBlockPerTileBetweenTheFp16x3Passes) {
  const Config c = FamilyRegistry::builtin().parseName(kClassic);
  const LaunchPlan plan = planLaunch(c, problem(1000, 777, 300, 5));
  ASSERT_TRUE(plan.runnable()) << plan.refusal;
  std::vector<int> order;
  for (const KernelLaunch& l : plan.launches) order.push_back(l.kernel);
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3, 4, 5, 6, 0, 7}));
  const KernelLaunch& gemm = plan.mainLaunch();
  EXPECT_EQ(gemm.grid.x, 8u * 4);  // 1000 rows in 128s, 777 columns (784 rounded to 8) in 256s
  EXPECT_EQ(gemm.grid.y, 1u);
  EXPECT_EQ(gemm.grid.z, 5u);
  EXPECT_EQ(gemm.block.x, 256u);
  EXPECT_EQ(gemm.dynamicSmemBytes, 4 * (128 + 256) * 128 + 1024);
}

TEST(WgmmaFp16x3, TilesBeyondGridXAreRefused) {
  const Config c = FamilyRegistry::builtin().parseName(kClassic);
  const LaunchPlan plan = planLaunch(c, problem(1LL << 30, 1LL << 30, 1));
  EXPECT_FALSE(plan.runnable());
  EXPECT_NE(plan.refusal.find("exceed the grid's x"), std::string::npos) << plan.refusal;
}

TEST(WgmmaFp16x3, CompiledForSm90aAndRunOnSm90Only) {
  const Config c = FamilyRegistry::builtin().parseName(kClassic);
  EXPECT_EQ(c.compileArch("sm_90"), "sm_90a");
  EXPECT_EQ(FamilyRegistry::builtin().parseName("fp16x3_bm128_bn256_bk64_wm64_wn64_st4_sw4").compileArch("sm_90"),
            "sm_90");
  EXPECT_EQ(c.family->onlyGpuArch(), "sm_90");
  EXPECT_EQ(FamilyRegistry::builtin().get("fp16x3").onlyGpuArch(), "");
  EXPECT_TRUE(c.family->runsOn("sm_90"));
  EXPECT_FALSE(c.family->runsOn("sm_90a"));  // a GPU's arch has no feature suffix
  EXPECT_FALSE(c.family->runsOn("sm_100"));
  EXPECT_TRUE(FamilyRegistry::builtin().get("fp16x3").runsOn("sm_100"));  // no onlyArch: anywhere
  EXPECT_EQ(c.violatedOn(profile("h100")), nullptr);
  EXPECT_EQ(c.violatedOn(profile("h200")), nullptr);
  for (const char* other : {"a100", "l4"}) {
    const TargetConstraint* why = c.violatedOn(profile(other));
    ASSERT_NE(why, nullptr) << other;
    EXPECT_EQ(why->name, "wgmma");
  }
}

// The files `ptx -o` writes are named by the target they hold (sm_90a), not by the GPU asked for.
TEST(WgmmaFp16x3, PtxFilesAreNamedByTheCompiledTarget) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "gemmtune-wgmma-ptx-test";
  std::filesystem::remove_all(dir);
  const auto r = test::runCli({"ptx", kClassic, "--arch", "sm_90", "-o", dir.string(), "--no-cache"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir / (std::string(kClassic) + ".sm_90a.ptx")));
  EXPECT_TRUE(std::filesystem::exists(dir / (std::string(kClassic) + ".sm_90a.cubin")));
  EXPECT_FALSE(std::filesystem::exists(dir / (std::string(kClassic) + ".sm_90.ptx")));
  std::filesystem::remove_all(dir);
}

TEST(WgmmaFp16x3, PtxForAnotherArchSaysWhichToUse) {
  const auto r = test::runCli({"ptx", kClassic, "--arch", "sm_80", "--stats"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("wgmmafp16x3 runs on sm_90 GPUs only (its code is compiled for sm_90a): use --arch sm_90"),
            std::string::npos)
      << r.err;
}

// Values --params accepts outside the default domain get a named constraint, not a static_assert
// from NVRTC (BM 64 and 192, SN 32 passed every constraint before).
TEST(WgmmaFp16x3, ShapesTheTemplateRefusesAreConstraintViolations) {
  for (const char* name : {"wgmmafp16x3_bm64_bn128_sn64_st4_rs1_gr8", "wgmmafp16x3_bm192_bn128_sn64_st4_rs1_gr8",
                           "wgmmafp16x3_bm128_bn128_sn32_st4_rs1_gr8"}) {
    try {
      FamilyRegistry::builtin().parseName(name);
      ADD_FAILURE() << name << " was accepted";
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find("violates constraint wgmma_shapes"), std::string::npos) << e.what();
    }
  }
}

// Both kinds of run (one sub-tile whose chains span RESTART k tiles; several sub-tiles) compile
// under NVRTC for sm_90a without a GPU.
TEST(WgmmaFp16x3, CompilesForSm90aWithoutAGpu) {
  Compiler compiler({{}, {}, 1});  // no disk cache: really compile, as the tuner asks for an sm_90 GPU
  for (const char* name : {kClassic, "wgmmafp16x3_bm128_bn128_sn128_st4_rs4_gr8"}) {
    const Config c = FamilyRegistry::builtin().parseName(name);
    ASSERT_EQ(c.violated(), nullptr) << name;
    const CompileResult r = compiler.compile(c, "sm_90");
    ASSERT_TRUE(r.ok) << name << "\n" << r.log;
    EXPECT_EQ(r.arch, "sm_90a");
    EXPECT_NE(r.ptx.find(".target sm_90a"), std::string::npos) << name;
    EXPECT_NE(r.ptx.find("wgmma.mma_async"), std::string::npos) << name;
  }
}
