// A results store of schema 1 (before batches) on either backend, built by hand
// (tests/store_schema_v1.hpp): a writing open migrates it in place to the current schema — every row kept,
// read as nn batch 1 under the cache key it was stored with, still served exactly, still final
// for `tune --resume` — and batched rows and baselines then sit beside them. A read-only open
// of a SQLite file reads it as the current schema without writing it (a deployed snapshot in a read-only
// directory); a read-only open of a server store asks for one writing command first.
// Run: ctest -R StoreMigration
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "Database.hpp"
#include "JsonExchange.hpp"
#include "Lookup.hpp"
#include "PresentEnvironment.hpp"
#include "store_schema_v1.hpp"
#include "store_test_support.hpp"

namespace gemmtune::db {
namespace {

using test::stamp;

struct OldRows {
  ResultRecord fast = test::okResult("blocktile1d_bm64_bn64_bk8_tm8", 4096, 4096, 4096, 17000);
  ResultRecord small = test::okResult("smem_bs32", 2048, 2048, 2048, 9000);
  OldRows() {
    fast.measuredAt = stamp(1);
    small.measuredAt = stamp(2);
    fast.cubin.clear(), small.cubin.clear();  // schema-1 rows are written without a cubin here
  }
  std::vector<ResultRecord> all() const { return {fast, small}; }
};

class StoreMigration : public test::BackendTest {
 protected:
  void SetUp() override {
    BackendTest::SetUp();
    if (IsSkipped()) return;
    const std::string rows = test::schemaV1Rows(test::testGpu(), old_.all(), 2.5);
    if (server_) {
      test::writeSchemaV1Postgres(*server_, "store_test", rows);
    } else {
      test::writeSchemaV1Sqlite(dir_ / "tune.db", rows);
    }
  }
  int storedSchemaVersion() const {
    if (server_) return std::stoi(server_->query("store_test", "SELECT schema_version FROM gemmtune_meta"));
    return static_cast<int>(Database(dir_ / "tune.db", {OpenMode::ReadOnly, OpenCheck::Quick})
                                .queryInt("PRAGMA main.user_version"));
  }
  // The old rows, read through `store` as a single nn product each under their old cache keys, and
  // served exactly.
  void expectOldRows(const ResultStore& store) const {
    auto rows = store.results({});
    ASSERT_EQ(rows.size(), 2u);
    for (const auto& [got, want] : {std::pair{rows[0], old_.small}, std::pair{rows[1], old_.fast}}) {
      EXPECT_EQ(got.key.problem, want.key.problem);
      EXPECT_EQ(got.key.problem.layout, "nn");
      EXPECT_EQ(got.key.problem.batch, 1);
      EXPECT_EQ(got.cacheKeyHash, want.key.hash());
      EXPECT_EQ(got.key.hash(), got.cacheKeyHash);
      EXPECT_EQ(got.gflops, want.gflops);
      EXPECT_EQ(got.measuredAt, want.measuredAt);
    }
    auto baselines = store.baselines();
    ASSERT_EQ(baselines.size(), 2u);
    EXPECT_EQ(baselines[0].problem, (ProblemKey{4096, 4096, 4096, "nn", "any", 1}));
    EXPECT_EQ(store.baselineGflops(*store.gpuId(gpuFingerprint(test::testGpu())), {2048, 2048, 2048}),
              gflopsOf({2048, 2048, 2048}, 2.5));
    serving::Lookup lookup(store, serving::presentEnvironment());
    auto best = lookup.best(test::testGpu(), {4096, 4096, 4096});
    EXPECT_EQ(best.quality, serving::MatchQuality::exact);
    EXPECT_EQ(best.instance, "blocktile1d_bm64_bn64_bk8_tm8");
    EXPECT_EQ(best.cublasGflops, gflopsOf({4096, 4096, 4096}, 2.5));
  }

  OldRows old_;
};

TEST_P(StoreMigration, AWritingOpenMigratesInPlaceAndKeepsEveryRow) {
  ASSERT_EQ(storedSchemaVersion(), 1);
  auto store = open();
  EXPECT_EQ(storedSchemaVersion(), kSchemaVersion);
  expectOldRows(*store);
  // Nothing to measure again: the old keys are final.
  auto final = store->finalStatuses(test::testGpu());
  EXPECT_EQ(final.size(), 2u);
  EXPECT_EQ(final.count(old_.fast.key.hash()), 1u);

  // New problems of the same sizes sit beside the old rows.
  auto run = store->beginRun(test::testRun());
  auto batched = test::okResult("blocktile1d_bm64_bn64_bk8_tm8", 4096, 4096, 4096, 19000);
  batched.key.problem.batch = 8;
  auto transposed = test::okResult("blocktile1d_bm64_bn64_bk8_tm8", 4096, 4096, 4096, 18000);
  transposed.key.problem.layout = "tn";
  ASSERT_TRUE(store->recordResult(run, batched));
  ASSERT_TRUE(store->recordResult(run, transposed));
  auto b = test::cublasBaseline(4096, 20.0, "12.9");
  b.problem.batch = 8;
  ASSERT_TRUE(store->recordBaseline(run, b));
  store->endRun(run);
  EXPECT_EQ(store->results({}).size(), 4u);
  EXPECT_EQ(store->baselines().size(), 3u);
  ResultFilter single;
  single.batch = 1;
  single.layout = "nn";
  EXPECT_EQ(store->results(single).size(), 2u);
  EXPECT_EQ(store->baselineGflops(*store->gpuId(gpuFingerprint(test::testGpu())), batched.key.problem),
            gflopsOf(b.problem, 20.0));

  // Opening again migrates nothing more and loses nothing.
  auto again = open();
  EXPECT_EQ(again->results({}).size(), 4u);
  EXPECT_EQ(again->baselines().size(), 3u);
}

TEST_P(StoreMigration, AReadOnlyOpenReadsTheOldSchemaWithoutWritingIt) {
  if (server_) {
    try {
      open(OpenMode::ReadOnly);
      ADD_FAILURE() << "a read-only open of schema 1 on a server";
    } catch (const DataError& e) {
      EXPECT_NE(std::string(e.what()).find("open it once with a writing command"), std::string::npos) << e.what();
    }
    EXPECT_EQ(storedSchemaVersion(), 1);
    return;
  }
  const std::string before = test::readBytes(dir_ / "tune.db");
  {
    auto reader = open(OpenMode::ReadOnly);
    ASSERT_TRUE(reader->hasSchema());
    expectOldRows(*reader);
    ResultFilter batched;
    batched.batch = 8;
    EXPECT_TRUE(reader->results(batched).empty());
    std::ostringstream exported;
    exportJson(*reader, exported);
    auto doc = nlohmann::json::parse(exported.str());
    EXPECT_EQ(doc["version"], kExchangeVersion);
    EXPECT_EQ(doc["results"][0]["batch"], 1);
    EXPECT_EQ(doc["baselines"][0]["batch"], 1);
  }
  EXPECT_EQ(test::readBytes(dir_ / "tune.db"), before);
  EXPECT_EQ(storedSchemaVersion(), 1);
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreMigration, test::backendNames(), test::backendName);

}  // namespace
}  // namespace gemmtune::db
