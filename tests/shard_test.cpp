// `tune --shard I/N`: the grammar, and that shards split a sweep's size × family units without
// overlap, cover all of them, agree between processes and balance the estimated cost.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "CliRunner.hpp"
#include "gemmtune/Errors.hpp"
#include "FamilyRegistry.hpp"
#include "Shard.hpp"

using namespace gemmtune;

namespace {

std::vector<const Family*> everyFamily() {
  std::vector<const Family*> out;
  for (const auto& f : FamilyRegistry::builtin().all()) out.push_back(&f);
  return out;
}

std::string key(const WorkUnit& u) { return u.shape.str() + " " + u.family->name; }

}  // namespace

TEST(Shard, ParsesIOfNCountedFromZero) {
  EXPECT_EQ(parseShard("0/1").count, 1);
  EXPECT_TRUE(parseShard("0/1").whole());
  ShardSpec s = parseShard("3/8");
  EXPECT_EQ(s.index, 3);
  EXPECT_EQ(s.count, 8);
  EXPECT_EQ(s.str(), "3/8");
  for (const char* bad : {"", "3", "8/8", "-1/4", "1/0", "a/4", "1/4/2", "1/ 4", "0/4097", "99999999999/3"}) {
    try {
      parseShard(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("give I/N with 0 <= I < N"), std::string::npos) << e.what();
    }
  }
}

TEST(Shard, ShardsCoverTheSweepOnceAndAgree) {
  const auto families = everyFamily();
  const auto sizes = parseSizes("1024..8192,1000,4096x1024x512");
  const auto units = workUnits(sizes, families);
  ASSERT_EQ(units.size(), sizes.size() * families.size());
  for (int n = 1; n <= 9; ++n) {
    std::multiset<std::string> seen;
    for (int i = 0; i < n; ++i)
      for (const WorkUnit& u : unitsOf(units, ShardSpec{i, n})) seen.insert(key(u));
    EXPECT_EQ(seen.size(), units.size()) << n << " shards";
    for (const WorkUnit& u : units) EXPECT_EQ(seen.count(key(u)), 1u) << key(u) << " with " << n << " shards";
    // Another process computes the same assignment from the same command line.
    EXPECT_EQ(assignShards(units, n), assignShards(workUnits(sizes, families), n));
  }
}

TEST(Shard, LargestFirstBalancesTheEstimatedCost) {
  const auto units = workUnits(parseSizes("1024..8192:1024"), everyFamily());
  for (int n : {2, 4, 8}) {
    std::vector<double> load(static_cast<size_t>(n), 0.0);
    const auto shardOf = assignShards(units, n);
    double total = 0, largest = 0;
    for (size_t i = 0; i < units.size(); ++i) {
      load[static_cast<size_t>(shardOf[i])] += units[i].cost;
      total += units[i].cost;
      largest = std::max(largest, units[i].cost);
    }
    // Greedy largest-first: no shard exceeds the mean by more than the largest unit.
    EXPECT_LE(*std::max_element(load.begin(), load.end()), total / n + largest) << n << " shards";
  }
  // Bigger problems and bigger spaces cost more.
  const Family* small = &FamilyRegistry::builtin().get("smem");
  const Family* large = &FamilyRegistry::builtin().get("blocktile1d");
  auto cost = workUnits({{1024, 1024, 1024}, {8192, 8192, 8192}}, {small, large});
  EXPECT_LT(cost[0].cost, cost[1].cost);  // 1024: smem < blocktile1d
  EXPECT_LT(cost[1].cost, cost[3].cost);  // blocktile1d: 1024 < 8192
}

TEST(TuneCliShard, BadShardIsOneLineBeforeAnyGpuWork) {
  auto r = test::runCli({"tune", "--sizes", "1024", "--shard", "4/4"});
  EXPECT_EQ(r.exitCode, 2) << r.err;
  EXPECT_NE(r.err.find("bad --shard '4/4'"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(TuneCliShard, AShardWithoutWorkSaysSoAndSucceeds) {
  // One size of one family is one unit: shard 1 of 2 has nothing to do, and needs no GPU for it.
  auto r = test::runCli({"tune", "--sizes", "64", "--families", "smem", "--shard", "1/2"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.err.find("shard 1/2 has no work: the sweep has 1 unit(s) of size × family for 2 shards"), std::string::npos) << r.err;
}
