// The `seen` table (schema 3) on both backends: the library's record of problems served without an
// exact row adds to one row per GPU and problem, lists most time first, clears; a schema-2 store
// is migrated in place (every row kept), read as schema 3 when opened read-only (SQLite, the file
// untouched) and left alone by an open that must not migrate (the library's). Export and snapshots
// leave the rows out (docs/db-format.md).
// Run: ctest -R StoreSeen
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "Database.hpp"
#include "JsonExchange.hpp"
#include "Schema.hpp"
#include "Snapshot.hpp"
#include "store_test_support.hpp"

namespace gemmtune::db {
namespace {

SeenRecord seenOf(long long m, long long n, long long k, std::int64_t calls, double ms, std::string layout = "nn",
                  long long batch = 1) {
  return SeenRecord{ProblemKey{m, n, k, std::move(layout), "any", batch}, calls, ms};
}

class StoreSeen : public test::BackendTest {
 protected:
  // Makes the store a schema-2 one, as gemmtune 2 left it: migrations 1 and 2 exactly, no `seen`.
  void downgradeToSchema2() {
    if (server_) {
      server_->psql("store_test", "DROP TABLE seen; UPDATE gemmtune_meta SET schema_version = 2;");
      return;
    }
    Database db(dir_ / "tune.db", {OpenMode::ReadWrite, OpenCheck::Quick});
    db.exec("DROP TABLE seen; PRAGMA user_version = 2; PRAGMA journal_mode = DELETE");
  }
  int storedSchemaVersion() const {
    if (server_) return std::stoi(server_->query("store_test", "SELECT schema_version FROM gemmtune_meta"));
    return static_cast<int>(
        Database(dir_ / "tune.db", {OpenMode::ReadOnly, OpenCheck::Quick}).queryInt("PRAGMA main.user_version"));
  }
};

TEST_P(StoreSeen, RecordsAddToOneRowPerGpuAndProblem) {
  auto store = open();
  const GpuSpec gpu = test::testGpu();
  ASSERT_FALSE(store->gpuId(gpuFingerprint(gpu)));  // recordSeen adds the GPU
  const std::vector<SeenRecord> first{seenOf(16, 1023, 3422, 10, 5.0, "tn"), seenOf(4096, 64, 64, 3, 0.3)};
  store->recordSeen(gpu, first);
  const std::vector<SeenRecord> second{seenOf(16, 1023, 3422, 5, 2.5, "tn"), seenOf(100, 100, 100, 1, 9.0, "nn", 8)};
  store->recordSeen(gpu, second);

  auto rows = store->seen({});
  ASSERT_EQ(rows.size(), 3u);
  // Most time first: 100³ batch 8 (9 ms), the tn shape (7.5 ms in 10 + 5 calls), then 0.3 ms.
  EXPECT_EQ(rows[0].problem, (ProblemKey{100, 100, 100, "nn", "any", 8}));
  EXPECT_EQ(rows[1].problem, (ProblemKey{16, 1023, 3422, "tn", "any", 1}));
  EXPECT_EQ(rows[1].calls, 15);
  EXPECT_DOUBLE_EQ(rows[1].timeMs, 7.5);
  EXPECT_LE(rows[1].firstSeen, rows[1].lastSeen);
  EXPECT_EQ(rows[2].problem, (ProblemKey{4096, 64, 64, "nn", "any", 1}));
  EXPECT_EQ(rows[2].calls, 3);
  EXPECT_EQ(rows[2].firstSeen, rows[2].lastSeen);
  const auto id = store->gpuId(gpuFingerprint(gpu));
  ASSERT_TRUE(id);
  for (const auto& r : rows) {
    EXPECT_EQ(r.gpuId, *id);
    EXPECT_EQ(r.gpuFingerprint, gpuFingerprint(gpu));
    EXPECT_EQ(r.gpuName, gpu.name);
  }

  // Another GPU's rows are its own; the filter and the limit select.
  const GpuSpec other = test::testGpu(114);
  const std::vector<SeenRecord> third{seenOf(16, 1023, 3422, 1, 100.0, "tn")};
  store->recordSeen(other, third);
  SeenFilter mine;
  mine.gpuId = *id;
  EXPECT_EQ(store->seen(mine).size(), 3u);
  SeenFilter top;
  top.limit = 1;
  auto first1 = store->seen(top);
  ASSERT_EQ(first1.size(), 1u);
  EXPECT_EQ(first1[0].gpuFingerprint, gpuFingerprint(other));
  EXPECT_EQ(first1[0].calls, 1);

  EXPECT_EQ(store->clearSeen(*id), 3u);
  EXPECT_EQ(store->seen({}).size(), 1u);
  EXPECT_EQ(store->clearSeen(std::nullopt), 1u);
  EXPECT_TRUE(store->seen({}).empty());
}

TEST_P(StoreSeen, ABadRecordWritesNothing) {
  auto store = open();
  const std::vector<SeenRecord> bad{seenOf(64, 64, 64, 1, 1.0), seenOf(64, 0, 64, 1, 1.0)};
  EXPECT_THROW(store->recordSeen(test::testGpu(), bad), DataError);
  const std::vector<SeenRecord> noCalls{seenOf(64, 64, 64, 0, 1.0)};
  EXPECT_THROW(store->recordSeen(test::testGpu(), noCalls), DataError);
  const std::vector<SeenRecord> nanTime{seenOf(64, 64, 64, 1, std::nan(""))};
  EXPECT_THROW(store->recordSeen(test::testGpu(), nanTime), DataError);
  EXPECT_TRUE(store->seen({}).empty());
  EXPECT_TRUE(store->gpus().empty());
}

TEST_P(StoreSeen, ASchema2StoreIsMigratedInPlace) {
  {
    auto store = open();
    auto run = store->beginRun(test::testRun());
    ASSERT_TRUE(store->recordResult(run, test::okResult("smem_bs32", 2048, 2048, 2048, 9000)));
    store->endRun(run);
  }
  downgradeToSchema2();
  ASSERT_EQ(storedSchemaVersion(), 2);

  // The library's writing open does not upgrade it: the file stays as it was.
  OpenOptions library{OpenMode::ReadWrite, OpenCheck::Header};
  library.migrate = false;
  try {
    openStore(location_, library);
    ADD_FAILURE() << "an open that must not migrate opened a schema-2 store";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("older schema version 2"), std::string::npos) << e.what();
  }
  EXPECT_EQ(storedSchemaVersion(), 2);

  if (!server_) {
    // Read-only, SQLite reads it as schema 3: nothing recorded, the file not written.
    const std::string before = test::readBytes(dir_ / "tune.db");
    {
      auto reader = open(OpenMode::ReadOnly);
      EXPECT_TRUE(reader->seen({}).empty());
      EXPECT_EQ(reader->results({}).size(), 1u);
    }
    EXPECT_EQ(test::readBytes(dir_ / "tune.db"), before);
  }

  auto store = open();  // a gemmtune command's open migrates
  EXPECT_EQ(storedSchemaVersion(), kSchemaVersion);
  EXPECT_EQ(store->results({}).size(), 1u);
  const std::vector<SeenRecord> rows{seenOf(64, 64, 64, 2, 1.0)};
  store->recordSeen(test::testGpu(), rows);
  EXPECT_EQ(store->seen({}).size(), 1u);
  auto again = openStore(location_, library);  // current now: the library may write
  again->recordSeen(test::testGpu(), rows);
  EXPECT_EQ(store->seen({})[0].calls, 4);
}

TEST_P(StoreSeen, ExportAndSnapshotsLeaveTheRecordOut) {
  auto store = open();
  auto run = store->beginRun(test::testRun());
  ASSERT_TRUE(store->recordResult(run, test::okResult("smem_bs32", 2048, 2048, 2048, 9000)));
  store->endRun(run);
  const std::vector<SeenRecord> rows{seenOf(64, 64, 64, 2, 1.0)};
  store->recordSeen(test::testGpu(), rows);

  std::ostringstream exported;
  exportJson(*store, exported);
  auto doc = nlohmann::json::parse(exported.str());
  EXPECT_FALSE(doc.contains("seen"));
  EXPECT_EQ(exported.str().find("\"calls\""), std::string::npos);

  auto copy = openStore(otherLocation("snapshot_copy"), {OpenMode::ReadWrite});
  copySnapshot(*store, *copy, {});
  EXPECT_EQ(copy->results({}).size(), 1u);
  EXPECT_TRUE(copy->seen({}).empty());
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreSeen, test::backendNames(), test::backendName);

}  // namespace
}  // namespace gemmtune::db
