// The helpers the engine GPU tests judge with, checked on the CPU: the best-agreement rule, the
// rows-kept and one-row-per-key checks, reading a database, and the background CLI process.
#include <gtest/gtest.h>

#include "Database.hpp"
#include "SqliteStore.hpp"
#include "db_test_support.hpp"
#include "engine_cli_process.hpp"
#include "engine_db_checks.hpp"

using namespace gemmtune;
using namespace gemmtune::test;
using namespace std::chrono_literals;

namespace {

db::StoredResult row(const std::string& key, const std::string& instance, const std::string& status) {
  db::StoredResult r;
  r.cacheKeyHash = key;
  r.key.instance = instance;
  r.key.problem = {256, 256, 256};
  r.setStatus(status);
  return r;
}

}  // namespace

TEST(SameBest, SameWinnerAgrees) { EXPECT_TRUE(sameBest({{"a", 1.0}, {"b", 2.0}}, {{"a", 1.1}, {"b", 2.0}})); }

TEST(SameBest, DifferentWinnersWithinToleranceInBothRunsAgree) {
  EXPECT_TRUE(sameBest({{"a", 1.00}, {"b", 1.02}}, {{"a", 1.01}, {"b", 1.00}}));
}

TEST(SameBest, DifferentWinnersBeyondToleranceInEitherRunDisagree) {
  EXPECT_FALSE(sameBest({{"a", 1.00}, {"b", 1.10}}, {{"a", 1.01}, {"b", 1.00}}));
  EXPECT_FALSE(sameBest({{"a", 1.00}, {"b", 1.01}}, {{"a", 1.10}, {"b", 1.00}}));
}

TEST(SameBest, WinnersNeitherRunMeasuredMustBeEquallyFastAcrossRuns) {
  EXPECT_TRUE(sameBest({{"a", 1.0}}, {{"b", 1.02}}));   // within 3 %: carried sets differed, nothing lost
  EXPECT_FALSE(sameBest({{"a", 1.0}}, {{"b", 1.2}}));   // the resumed run's winner is 20 % slower
  EXPECT_FALSE(sameBest({{"a", 1.0}}, {{"b", 0.8}}));   // or faster: the runs disagree either way
  EXPECT_FALSE(sameBest({}, {{"b", 1.0}}));
}

TEST(SameBest, OneSidedComparisonIsEnough) { EXPECT_TRUE(sameBest({{"a", 1.0}, {"b", 1.02}}, {{"b", 1.0}})); }

TEST(FinalRowsKept, PrunedRowsMayChangeFinalOnesMayNot) {
  std::vector<db::StoredResult> before{row("k1", "x", "ok"), row("k2", "y", "pruned:rank"),
                                       row("k3", "z", "runtime_fault:CUDA_ERROR_ILLEGAL_ADDRESS")};
  std::vector<db::StoredResult> after{row("k1", "x", "ok"), row("k2", "y", "ok"),
                                      row("k3", "z", "runtime_fault:CUDA_ERROR_ILLEGAL_ADDRESS")};
  EXPECT_TRUE(finalRowsKept(before, after));
  after[0] = row("k1", "x", "pruned:rank");
  EXPECT_FALSE(finalRowsKept(before, after));
  after.erase(after.begin());
  EXPECT_FALSE(finalRowsKept(before, after));
}

TEST(OnePerKey, FlagsARepeatedKeyAndAnInstanceUnderTwoKeys) {
  EXPECT_TRUE(onePerKey({row("k1", "x", "ok"), row("k2", "y", "ok")}));
  EXPECT_FALSE(onePerKey({row("k1", "x", "ok"), row("k1", "y", "ok")}));
  EXPECT_FALSE(onePerKey({row("k1", "x", "ok"), row("k2", "x", "ok")}));
}

TEST(EngineDbChecks, ReadsRowsWithCubinsAndMediansOfCompleteOkRows) {
  ScratchDir dir;
  const auto path = dir / "tune.db";
  {
    db::Database database(path, {db::OpenMode::ReadWrite});
    db::SqliteStore store(database);
    auto run = store.beginRun(testRun());
    store.recordResult(run, okResult("blocktile1d_bm64_bn64_bk8_tm8", 256, 256, 256, 5000));
    auto partial = okResult("smem_bs32", 256, 256, 256, 9000);
    partial.partial = true;
    store.recordResult(run, partial);
  }
  auto rows = readRows(path);
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& r : rows) EXPECT_FALSE(r.cubin.empty());
  auto medians = okMedians(rows, GemmShape{256, 256, 256});
  ASSERT_EQ(medians.size(), 1u);
  EXPECT_EQ(medians.begin()->first, "blocktile1d_bm64_bn64_bk8_tm8");
  EXPECT_TRUE(okMedians(rows, GemmShape{512, 512, 512}).empty());
  EXPECT_EQ(integrity(path), "ok");
  EXPECT_TRUE(onePerKey(rows));
}

TEST(CliProcess, RunsTheCliInTheBackgroundAndCollectsItsExit) {
  ScratchDir dir;
  CliProcess help({"--help"}, {}, dir.path());
  auto rc = help.wait(30s);
  ASSERT_TRUE(rc);
  EXPECT_EQ(*rc, 0);
  EXPECT_NE(help.out().find("tune"), std::string::npos);
  EXPECT_EQ(liveWorkers(), 0);
}
