// The tuning engine on a simulated GPU (tests/fake_worker `table`: times computed from the
// instance name and problem, NVRTC compiling for sm_90 on this machine): what the search and
// sharding decide can be tested without a GPU.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <set>

#include "Compiler.hpp"
#include "FamilyRegistry.hpp"
#include "GpuDetect.hpp"
#include "ResultStore.hpp"
#include "TuningEngine.hpp"
#include "db_test_support.hpp"

using namespace gemmtune;
using namespace gemmtune::test;
namespace fs = std::filesystem;

namespace {

class EngineSim : public ::testing::Test {
 protected:
  // Every ok row of `store` as "instance at size".
  static std::multiset<std::string> okRows(const fs::path& dbPath) {
    auto store = db::openStore(dbPath.string(), {db::OpenMode::ReadOnly});
    std::multiset<std::string> out;
    for (const auto& r : store->results({}))
      if (r.status == "ok") out.insert(r.instance() + " at " + std::to_string(r.key.problem.m));
    return out;
  }

  GpuOutcome tune(const fs::path& dbPath, std::optional<ShardSpec> shard = std::nullopt) {
    Compiler compiler(CompilerOptions{{}, dir_.path() / "cache", 0});
    auto store = db::openStore(dbPath.string(), {db::OpenMode::ReadWrite});
    TuneOptions options;
    options.sizes = {{256, 256, 256}, {512, 512, 512}};
    for (const char* f : {"smem", "blocktile2d"}) options.families.push_back(&FamilyRegistry::builtin().get(f));
    options.carry = 0;  // every candidate at every size: shards then measure exactly what one run does
    options.simulated = TuneOptions::SimulatedGpu{{GEMMTUNE_FAKE_WORKER, "table", dir_.path().string()}, 13000};
    options.commandLine = "engine_sim_test";
    if (shard) options.units = unitsOf(workUnits(options.sizes, options.families), *shard);
    ProgressLine progress(false);
    std::atomic<bool> stop{false};
    TuningEngine engine(resolveGpu("h100"), compiler, *store, options, progress, stop);
    return engine.run();
  }

  ScratchDir dir_;
};

}  // namespace

TEST_F(EngineSim, ShardsTogetherMeasureExactlyWhatOneRunDoes) {
  const fs::path whole = dir_.path() / "whole.db";
  GpuOutcome one = tune(whole);
  ASSERT_EQ(one.sizes.size(), 2u);
  const auto expected = okRows(whole);
  ASSERT_GT(expected.size(), 10u);

  // Three shards into one store, as three array tasks would write into a shared one.
  const fs::path sharded = dir_.path() / "sharded.db";
  std::multiset<std::string> perShard;
  for (int i = 0; i < 3; ++i) {
    tune(sharded, ShardSpec{i, 3});
    const fs::path alone = dir_.path() / ("shard" + std::to_string(i) + ".db");
    tune(alone, ShardSpec{i, 3});
    for (const auto& row : okRows(alone)) perShard.insert(row);
  }
  EXPECT_EQ(okRows(sharded), expected);  // the union
  EXPECT_EQ(perShard, expected);         // and no unit measured by two shards
}

TEST_F(EngineSim, TheSimulatedGpuRanksCandidatesTheSameWayEveryRun) {
  GpuOutcome a = tune(dir_.path() / "a.db"), b = tune(dir_.path() / "b.db");
  ASSERT_EQ(a.sizes.size(), b.sizes.size());
  for (size_t s = 0; s < a.sizes.size(); ++s) {
    ASSERT_EQ(a.sizes[s].families.size(), b.sizes[s].families.size());
    for (size_t f = 0; f < a.sizes[s].families.size(); ++f) {
      EXPECT_FALSE(a.sizes[s].families[f].bestInstance.empty()) << a.sizes[s].families[f].family;
      EXPECT_EQ(a.sizes[s].families[f].bestInstance, b.sizes[s].families[f].bestInstance);
    }
  }
}
