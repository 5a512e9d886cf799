// Database: opening good, new, damaged, foreign, newer and read-only files; transactions; backup.
// Run: ctest -R db_database_test
#include <sqlite3.h>
#include <sys/stat.h>

#include <random>

#include "Database.hpp"
#include "SqliteStore.hpp"
#include "Schema.hpp"
#include "db_test_support.hpp"
#include "ExitCodes.hpp"

using namespace gemmtune;
using namespace gemmtune::db;
using gemmtune::test::ScratchDir;

namespace {

OpenOptions readOnly() { return {OpenMode::ReadOnly, OpenCheck::Quick}; }
OpenOptions readWrite() { return {OpenMode::ReadWrite, OpenCheck::Quick}; }

// A database with `n` results whose error texts spread them over many pages.
void fillDb(const std::filesystem::path& path, int n) {
  Database db(path, readWrite());
  SqliteStore store(db);
  auto run = store.beginRun(test::testRun());
  Transaction tx(db);
  for (int i = 0; i < n; ++i) {
    auto r = test::okResult("blocktile1d_bm64_bn64_bk8_tm8", 64 * (i + 1), 64, 64, 1000 + i);
    r.errorText = std::string(500, static_cast<char>('a' + i % 26));
    store.upsertResult(run, 1, r);
  }
  tx.commit();
}

int exitCodeOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return exitCodeOf(e);
  }
  return 0;
}

std::string messageOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(dbDatabase, MissingFileOpenedReadOnlyIsAnIoErrorAndNotCreated) {
  ScratchDir dir;
  auto path = dir / "none.db";
  EXPECT_EQ(exitCodeOf([&] { Database db(path, readOnly()); }), kExitIoError);
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(dbDatabase, NewFileGetsSchemaApplicationIdAndWal) {
  ScratchDir dir;
  auto path = dir / "sub/dir/tune.db";
  Database db(path, readWrite());
  EXPECT_TRUE(db.hasSchema());
  EXPECT_EQ(db.queryInt("PRAGMA application_id"), kApplicationId);
  EXPECT_EQ(db.queryInt("PRAGMA user_version"), kSchemaVersion);
  EXPECT_EQ(db.queryInt("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN "
                        "('gpus', 'runs', 'results', 'baselines')"),
            4);
  auto mode = db.prepare("PRAGMA journal_mode");
  ASSERT_TRUE(mode.step());
  EXPECT_EQ(mode.getText(0), "wal");
}

TEST(dbDatabase, ZeroByteFileReadsAsEmptyAndIsInitialisedForWriting) {
  ScratchDir dir;
  auto path = dir / "empty.db";
  test::writeBytes(path, "");
  {
    Database db(path, readOnly());
    EXPECT_FALSE(db.hasSchema());
  }
  EXPECT_EQ(std::filesystem::file_size(path), 0u);
  Database db(path, readWrite());
  EXPECT_TRUE(db.hasSchema());
  EXPECT_EQ(db.queryInt("SELECT count(*) FROM results"), 0);
}

TEST(dbDatabase, GarbageJsonTruncatedForeignAndNewerFilesAreRefusedUntouched) {
  ScratchDir dir;
  std::vector<std::pair<std::string, std::filesystem::path>> bad;

  auto garbage = dir / "garbage.db";
  std::mt19937 gen(7);
  std::string noise(8192, '\0');
  for (auto& c : noise) c = static_cast<char>(gen());
  test::writeBytes(garbage, noise);
  bad.emplace_back("random garbage", garbage);

  auto json = dir / "export.db";
  test::writeBytes(json, R"({"format": "gemmtune-results", "version": 1, "gpus": []})");
  bad.emplace_back("JSON renamed .db", json);

  auto truncated = dir / "truncated.db";
  fillDb(truncated, 300);
  auto full = std::filesystem::file_size(truncated);
  ASSERT_GT(full, 100000u);
  std::filesystem::resize_file(truncated, full / 2);
  bad.emplace_back("truncated", truncated);

  auto foreign = dir / "foreign.db";
  {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(foreign.c_str(), &raw), SQLITE_OK);
    sqlite3_exec(raw, "CREATE TABLE photos (id INTEGER); INSERT INTO photos VALUES (1)", nullptr, nullptr, nullptr);
    sqlite3_close(raw);
  }
  bad.emplace_back("foreign SQLite", foreign);

  auto newer = dir / "newer.db";
  fillDb(newer, 1);
  {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(newer.c_str(), &raw), SQLITE_OK);
    sqlite3_exec(raw, "PRAGMA user_version = 99; PRAGMA journal_mode = DELETE", nullptr, nullptr, nullptr);
    sqlite3_close(raw);
  }
  bad.emplace_back("newer schema", newer);

  for (const auto& [what, path] : bad) {
    std::string before = test::readBytes(path);
    for (auto options : {readOnly(), readWrite()}) {
      EXPECT_EQ(exitCodeOf([&] { Database db(path, options); }), kExitDataError) << what;
      EXPECT_EQ(test::readBytes(path), before) << what << " was modified";
    }
    EXPECT_TRUE(std::filesystem::exists(path)) << what;
  }
  EXPECT_NE(messageOf([&] { Database db(newer, readOnly()); }).find("newer than this gemmtune"), std::string::npos);
  EXPECT_NE(messageOf([&] { Database db(foreign, readOnly()); }).find("another program"), std::string::npos);
}

TEST(dbDatabase, ReadOnlyFileCanStillBeQueried) {
  ScratchDir dir;
  auto path = dir / "ro.db";
  fillDb(path, 3);
  std::filesystem::permissions(path, std::filesystem::perms::owner_read | std::filesystem::perms::group_read);
  Database db(path, readOnly());
  SqliteStore store(db);
  EXPECT_EQ(store.results({}).size(), 3u);
  EXPECT_TRUE(db.readOnly());
  if (::geteuid() != 0) {  // root writes through file permissions
    EXPECT_EQ(exitCodeOf([&] { Database rw(path, readWrite()); }), kExitIoError);
  }
}

TEST(dbDatabase, UnwritableLocationIsAnIoError) {
  ScratchDir dir;
  test::writeBytes(dir / "plainfile", "x");
  // A regular file where a directory is needed fails even for root.
  EXPECT_EQ(exitCodeOf([&] { Database db(dir / "plainfile/sub/tune.db", readWrite()); }), kExitIoError);
  if (::geteuid() != 0) {
    std::filesystem::create_directory(dir / "locked");
    std::filesystem::permissions(dir / "locked", std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
    EXPECT_EQ(exitCodeOf([&] { Database db(dir / "locked/tune.db", readWrite()); }), kExitIoError);
  }
}

TEST(dbDatabase, TransactionRollsBackUnlessCommitted) {
  ScratchDir dir;
  Database db(dir / "t.db", readWrite());
  SqliteStore store(db);
  {
    Transaction tx(db);
    store.upsertGpu(test::testGpu(), {});
  }
  EXPECT_EQ(db.queryInt("SELECT count(*) FROM gpus"), 0);
  {
    Transaction tx(db);
    store.upsertGpu(test::testGpu(), {});
    tx.commit();
  }
  EXPECT_EQ(db.queryInt("SELECT count(*) FROM gpus"), 1);
}

TEST(dbDatabase, SqliteErrorKeepsTheResultCode) {
  ScratchDir dir;
  Database db(dir / "e.db", readWrite());
  try {
    db.prepare("SELECT nonsense FROM nowhere");
    FAIL() << "no exception";
  } catch (const SqliteError& e) {
    EXPECT_EQ(e.sqliteCode() & 0xff, SQLITE_ERROR);
    EXPECT_NE(std::string(e.what()).find("no such table: nowhere"), std::string::npos);
  }
}

TEST(dbDatabase, BackupIncludesRowsStillInTheWalAndRefusesToOverwrite) {
  ScratchDir dir;
  auto path = dir / "live.db";
  Database db(path, readWrite());
  SqliteStore store(db);
  auto run = store.beginRun(test::testRun());
  for (int i = 1; i <= 5; ++i) store.recordResult(run, test::okResult("smem_bs32", 32 * i, 32, 32, 100.0 * i));
  ASSERT_GT(std::filesystem::file_size(dir / "live.db-wal"), 0u);  // not yet checkpointed

  db.backupTo(dir / "copy.db");
  Database copy(dir / "copy.db", readOnly());
  EXPECT_EQ(copy.queryInt("SELECT count(*) FROM results"), 5);
  EXPECT_EQ(copy.integrityCheck(), "ok");
  EXPECT_EQ(exitCodeOf([&] { db.backupTo(dir / "copy.db"); }), kExitUsage);
}
