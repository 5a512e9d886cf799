// Canonical instance names: every configuration has exactly one name, and it parses back.
#include <gtest/gtest.h>

#include "FamilyRegistry.hpp"
#include "gemmtune/Errors.hpp"

using namespace gemmtune;

TEST(InstanceName, ClassicConfigsHaveTheDocumentedNames) {
  const auto& reg = FamilyRegistry::builtin();
  auto c = reg.parseParams(reg.get("blocktile1d"), "BM=64,BN=64,BK=8,TM=8", true);
  EXPECT_EQ(c.name(), "blocktile1d_bm64_bn64_bk8_tm8_guarded");
  EXPECT_EQ(c.nameExpression(), "sgemm_blocktile_1d<64,64,8,8,true,false,false>");
  auto s = reg.parseParams(reg.get("smem"), "BLOCKSIZE=32", false);
  EXPECT_EQ(s.name(), "smem_bs32");
  EXPECT_EQ(s.nameExpression(), "sgemm_smem_tiled<32,false,false,false>");
}

TEST(InstanceName, EveryPointOfEveryFamilyRoundTrips) {
  const auto& reg = FamilyRegistry::builtin();
  int checked = 0;
  for (const auto& f : reg.all())
    for (bool guarded : {false, true})
      for (const auto& c : FamilyRegistry::enumerate(f, guarded)) {
        if (c.violated()) continue;
        Config back = reg.parseName(c.name());
        EXPECT_EQ(back, c) << c.name();
        EXPECT_EQ(back.name(), c.name());
        ++checked;
      }
  EXPECT_GT(checked, 200);
}

TEST(InstanceName, RejectsNonCanonicalSpellings) {
  const auto& reg = FamilyRegistry::builtin();
  for (const char* bad : {"", "smem", "smem_bs", "smem_bs32_", "smem_bs032", "smem_bs+32", "smem_bs32_unguarded",
                          "smem_bs32_guarded_guarded", "blocktile1d_bn64_bm64_bk8_tm8", "blocktile1d_bm64_bn64_bk8",
                          "blocktile1d_bm64_bn64_bk8_tm8_x", "warptile_bm64", "SMEM_BS32", "smem_bs0",
                          "smem_bs99999999999", "blocktile1d_bm64_bn64_bk8_tm3"}) {
    EXPECT_THROW(reg.parseName(bad), UsageError) << bad;
  }
}

TEST(InstanceName, ConstraintViolationNamesTheConstraint) {
  const auto& reg = FamilyRegistry::builtin();
  try {
    reg.parseName("blocktile1d_bm64_bn64_bk8_tm3");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("tm_divides_bm"), std::string::npos) << e.what();
  }
}
