// A family added by the tests alone (tests/families/: probe_naive.cu + ProbeNaive.cpp, no other
// file edited): the registry enumerates it, `space` lists it and `ptx` compiles it, through a
// build of the CLI that links the test families. The plain CLI does not know it.
// Run: ctest -R TestFamily
#include <gtest/gtest.h>

#include "CliRunner.hpp"
#include "FamilyRegistry.hpp"

using namespace gemmtune;
using gemmtune::test::runCli;

TEST(TestFamily, EnrolsItselfAfterTheBuiltInFamilies) {
  const auto& reg = FamilyRegistry::builtin();
  ASSERT_NE(reg.find("probe"), nullptr);
  EXPECT_EQ(reg.all().back().name, "probe");  // order 1000: listed last
  Config c = reg.parseName("probe_bs16_guarded");
  LaunchPlan plan = planLaunch(c, GemmProblem::packed(100, 37, 5));
  ASSERT_TRUE(plan.runnable()) << plan.refusal;
  EXPECT_EQ(plan.launches.at(0).grid, (Dim3{3, 7, 1}));
  EXPECT_EQ(plan.launches.at(0).block, (Dim3{256, 1, 1}));
}

TEST(TestFamily, SpaceListsAndCompilesIt) {
  auto r = runCli({"space", "--gpu", "h100", "--family", "probe", "--size", "1000"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("probe_bs8 "), std::string::npos) << r.out;  // 8 divides 1000: unguarded
  EXPECT_NE(r.out.find("probe_bs16_guarded"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 compiled, 0 compile errors"), std::string::npos) << r.out;
}

TEST(TestFamily, PtxCompilesIt) {
  auto r = runCli({"ptx", "probe_bs16", "--arch", "sm_90", "--stats"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("sgemm_probe_naive"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("threads per block     256"), std::string::npos) << r.out;
}

TEST(TestFamily, HelpListsIt) {
  auto r = runCli({"tune", "--help"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find(FamilyRegistry::builtin().choices()), std::string::npos) << r.out;
}
