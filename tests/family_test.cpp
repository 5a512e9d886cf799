// Family specs: domains, constraints with reasons, geometry and shared-memory formulas.
#include <gtest/gtest.h>

#include <set>

#include "FamilyRegistry.hpp"
#include "gemmtune/Errors.hpp"

using namespace gemmtune;

namespace {
const FamilyRegistry& reg() { return FamilyRegistry::builtin(); }
}  // namespace

TEST(Family, RegistryListsBothFamilies) {
  EXPECT_EQ(reg().choices(), "smem, blocktile1d");
  EXPECT_NE(reg().find("smem"), nullptr);
  EXPECT_EQ(reg().find("nope"), nullptr);
  try {
    reg().get("nope");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "unknown family 'nope' (choose from: smem, blocktile1d)");
  }
}

TEST(Family, EveryConstraintHasANameAndReason) {
  for (const auto& f : reg().all())
    for (const auto& c : f.constraints) {
      EXPECT_FALSE(c.name.empty());
      EXPECT_GT(c.reason.size(), 20u) << c.name;
    }
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
    EXPECT_EQ(f.dynamicSmemBytes(c), (c["BM"] + c["BN"]) * c["BK"] * 4);
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

TEST(Family, GridCoversTheMatrixAndDividesDecidesGuarding) {
  const auto& f = reg().get("blocktile1d");
  Config c{&f, {128, 64, 8, 8}, false};
  Dim3 g = f.grid(c, 1000, 4097);
  EXPECT_EQ(g.x, 65u);  // ceil(4097 / 64)
  EXPECT_EQ(g.y, 8u);   // ceil(1000 / 128)
  EXPECT_TRUE(c.divides(1024, 1024, 1024));
  EXPECT_FALSE(c.divides(1024, 1024, 1020));  // K must be a multiple of BK
  EXPECT_FALSE(c.divides(1000, 1024, 1024));
  const auto& s = reg().get("smem");
  Config bs{&s, {32}, false};
  EXPECT_EQ(s.threadsPerBlock(bs), 1024);
  EXPECT_EQ(s.staticSmemBytes(bs), 8192);
  EXPECT_EQ(s.grid(bs, 33, 31).x, 1u);
  EXPECT_EQ(s.grid(bs, 33, 31).y, 2u);
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
