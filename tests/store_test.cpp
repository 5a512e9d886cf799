// The results-store interface on both backends: the same cases run against a SQLite file and a
// PostgreSQL server that the test starts itself (tests/pg_server.hpp; skipped with a message
// when the server binaries are missing). Also: refusal of a foreign or newer PostgreSQL schema,
// 8 concurrent writers (nothing lost, no duplicates, the later measurement wins, rows/s
// printed), and credentials masked in errors.
// Run: ctest -R store
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "Clock.hpp"
#include "Errors.hpp"
#include "ResultStore.hpp"
#include "db_test_support.hpp"
#include "pg_server.hpp"

namespace gemmtune::db {
namespace {

using test::okResult;
using test::testGpu;
using test::testRun;

// One backend's store location for one test: a file in a scratch dir, or a fresh database on
// a server of this test's own.
class StoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "postgresql") {
      if (auto why = test::PgServer::unavailableReason(); !why.empty()) GTEST_SKIP() << why;
      server_ = std::make_unique<test::PgServer>();
      location_ = server_->createDatabase("store_test");
    } else {
      location_ = "sqlite:" + (dir_ / "tune.db").string();
    }
  }
  std::unique_ptr<ResultStore> open(OpenMode mode = OpenMode::ReadWrite) const {
    return openStore(location_, {mode, OpenCheck::Quick});
  }

  test::ScratchDir dir_;
  std::unique_ptr<test::PgServer> server_;
  std::string location_;
};

// A valid ok record whose key differs by `i`.
ResultRecord row(int i, const std::string& measuredAt) {
  ResultRecord r = okResult("blocktile1d_bm64_bn64_bk8_tm8", 64 + i, 4096, 4096, 1000.0 + i);
  r.measuredAt = measuredAt;
  return r;
}

std::string stamp(int second) { return fmt::format("2025-01-31T12:{:02}:{:02}.000000Z", second / 60, second % 60); }

TEST_P(StoreTest, CreatesTheSchemaAndReopensReadOnly) {
  EXPECT_TRUE(open()->hasSchema());
  auto reader = open(OpenMode::ReadOnly);
  EXPECT_TRUE(reader->hasSchema());
  EXPECT_TRUE(reader->gpus().empty());
  EXPECT_TRUE(reader->results({}).empty());
}

TEST_P(StoreTest, RoundTripKeepsEveryField) {
  auto store = open();
  auto run = store->beginRun(testRun());
  ResultRecord a = okResult("blocktile1d_bm64_bn64_bk8_tm8", 4096, 4096, 4096, 17000.125);
  a.cubin = std::string("\0\x01\xff\x7f" "ELF\0\\x00'", 12);  // NULs, high bytes, quotes
  a.errorText = "quotes ' \" and\nnewlines";
  a.measuredAt = stamp(1);
  ResultRecord b = okResult("smem_bs32", 1000, 1000, 1000, 9000);
  b.setStatus("rejected:smem");
  b.medianMs.reset(), b.minMs.reset(), b.spread.reset(), b.reps.reset(), b.gflops.reset(), b.registers.reset();
  b.occupancy = 1.0 / 3.0;
  b.cubin.clear();
  b.measuredAt = stamp(2);
  ASSERT_TRUE(store->recordResult(run, a));
  ASSERT_TRUE(store->recordResult(run, b));
  BaselineRecord base;
  base.libraryVersion = "13.0.0";
  base.problem = {4096, 4096, 4096};
  base.medianMs = 2.5;
  ASSERT_TRUE(store->recordBaseline(run, base));
  store->endRun(run);

  auto reader = open(OpenMode::ReadOnly);
  ResultFilter all;
  all.withCubin = true;
  auto rows = reader->results(all);
  ASSERT_EQ(rows.size(), 2u);
  // Ordered by size: b (1000³) first.
  for (const auto& [stored, want] : {std::pair{rows[1], a}, std::pair{rows[0], b}}) {
    EXPECT_EQ(stored.cacheKeyHash, want.key.hash());
    EXPECT_EQ(stored.key.hash(), want.key.hash());
    EXPECT_EQ(stored.fullStatus(), want.fullStatus());
    EXPECT_EQ(stored.params, want.params);
    EXPECT_EQ(stored.errorText, want.errorText);
    EXPECT_EQ(stored.medianMs, want.medianMs);
    EXPECT_EQ(stored.minMs, want.minMs);
    EXPECT_EQ(stored.reps, want.reps);
    EXPECT_EQ(stored.registers, want.registers);
    EXPECT_EQ(stored.occupancy, want.occupancy);
    EXPECT_EQ(stored.maxError, want.maxError);
    EXPECT_EQ(stored.cubin, want.cubin);
    EXPECT_EQ(stored.measuredAt, want.measuredAt);
    EXPECT_EQ(reader->cubinOf(stored.id), want.cubin);
  }
  EXPECT_EQ(rows[1].gflops, a.gflops);
  EXPECT_FALSE(rows[0].gflops);
  auto runs = reader->runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_FALSE(runs[0].endedAt.empty());
  ASSERT_EQ(reader->gpus().size(), 1u);
  EXPECT_EQ(reader->gpus()[0].spec.l2Bytes, testGpu().l2Bytes);
  EXPECT_EQ(reader->gpuId(gpuFingerprint(testGpu())), reader->gpus()[0].id);
  EXPECT_EQ(reader->baselineGflops(reader->gpus()[0].id, base.problem), gflopsOf(base.problem, 2.5));
  EXPECT_EQ(reader->finalStatuses(testGpu()).size(), 2u);
  ResultFilter rejected;
  rejected.status = "rejected:smem";
  EXPECT_EQ(reader->results(rejected).size(), 1u);
  EXPECT_EQ(reader->measuredSizes({}).size(), 2u);
}

TEST_P(StoreTest, TheLaterMeasurementWins) {
  auto store = open();
  auto run = store->beginRun(testRun());
  ResultRecord r = row(0, stamp(10));
  EXPECT_TRUE(store->recordResult(run, r));
  r.medianMs = 9.0, r.gflops.reset(), r.measuredAt = stamp(5);
  EXPECT_FALSE(store->recordResult(run, r));  // older
  r.measuredAt = stamp(10);
  EXPECT_FALSE(store->recordResult(run, r));  // a tie keeps the stored row
  r.measuredAt = stamp(20);
  EXPECT_TRUE(store->recordResult(run, r));
  auto rows = store->results({});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].medianMs, 9.0);
}

// 8 writers, 10 000 rows: 1 250 keys of its own each, and every writer also writes the same
// 50 shared keys, each with its own measured_at; the writer with the latest time must win.
TEST_P(StoreTest, ConcurrentWritersLoseNothing) {
  constexpr int kWriters = 8, kRowsEach = 1250, kShared = 50;
  open();  // the schema, once
  std::atomic<int> failures{0};
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w)
    writers.emplace_back([&, w] {
      try {
        auto store = open();
        auto run = store->beginRun(testRun());
        for (int i = 0; i < kRowsEach - kShared; ++i) store->recordResult(run, row(1000 + w * kRowsEach + i, stamp(1)));
        for (int s = 0; s < kShared; ++s) {
          ResultRecord r = row(s, stamp(100 + (w + s) % kWriters));  // writer (15 - s % 8) % 8 is latest
          r.smClockMHz = w;
          store->recordResult(run, r);
        }
      } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
        ++failures;
      }
    });
  for (auto& t : writers) t.join();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(failures, 0);
  auto rows = open(OpenMode::ReadOnly)->results({});
  std::printf("[ store ] %s: %d rows from %d concurrent writers in %.2f s: %.0f rows/s\n", GetParam().c_str(),
              kWriters * kRowsEach, kWriters, seconds, kWriters * kRowsEach / seconds);
  EXPECT_EQ(rows.size(), static_cast<std::size_t>(kWriters * (kRowsEach - kShared) + kShared));
  std::set<std::string> keys;
  for (const auto& r : rows) {
    keys.insert(r.cacheKeyHash);
    long long i = r.key.problem.m - 64;
    if (i < kShared) {
      int latest = (2 * kWriters - 1 - static_cast<int>(i) % kWriters) % kWriters;
      EXPECT_EQ(r.smClockMHz, latest) << "shared key " << i;
      EXPECT_EQ(r.measuredAt, stamp(100 + kWriters - 1));
    }
  }
  EXPECT_EQ(keys.size(), rows.size()) << "duplicated cache keys";
  EXPECT_EQ(open(OpenMode::ReadOnly)->runs().size(), static_cast<std::size_t>(kWriters));
  EXPECT_EQ(open(OpenMode::ReadOnly)->gpus().size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreTest, ::testing::Values("sqlite", "postgresql"),
                         [](const auto& info) { return info.param; });

// --- PostgreSQL only ---------------------------------------------------------------------------

class PgStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = test::PgServer::unavailableReason(); !why.empty()) GTEST_SKIP() << why;
    server_ = std::make_unique<test::PgServer>();
  }
  std::unique_ptr<test::PgServer> server_;
};

int exitCodeOf(const std::function<void()>& f, std::string* message = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (message) *message = e.what();
    return exitCodeOf(e);
  }
  return 0;
}

TEST_F(PgStoreTest, AForeignSchemaIsRefusedUntouched) {
  auto url = server_->createDatabase("foreign_db");
  server_->psql("foreign_db", "CREATE TABLE accounts (id int); INSERT INTO accounts VALUES (7);");
  std::string message;
  EXPECT_EQ(exitCodeOf([&] { openStore(url, {OpenMode::ReadWrite}); }, &message), kExitDataError);
  EXPECT_NE(message.find("another program"), std::string::npos) << message;
  EXPECT_EQ(server_->query("foreign_db", "SELECT string_agg(tablename, ',') FROM pg_tables WHERE schemaname = 'public'"),
            "accounts");
}

TEST_F(PgStoreTest, ANewerSchemaIsRefusedUntouched) {
  auto url = server_->createDatabase("newer_db");
  openStore(url, {OpenMode::ReadWrite})->recordGpu(testGpu());
  server_->psql("newer_db", "UPDATE gemmtune_meta SET schema_version = 99");
  for (auto mode : {OpenMode::ReadWrite, OpenMode::ReadOnly}) {
    std::string message;
    EXPECT_EQ(exitCodeOf([&] { openStore(url, {mode}); }, &message), kExitDataError);
    EXPECT_NE(message.find("newer than this gemmtune"), std::string::npos) << message;
  }
  EXPECT_EQ(server_->query("newer_db", "SELECT schema_version FROM gemmtune_meta"), "99");
  EXPECT_EQ(server_->query("newer_db", "SELECT count(*) FROM gpus"), "1");
}

TEST_F(PgStoreTest, CredentialsNeverAppearInErrors) {
  std::string message;
  auto bad = server_->url("postgres", "Wrong-Pass-93");
  EXPECT_EQ(exitCodeOf([&] { openStore(bad, {OpenMode::ReadOnly}); }, &message), kExitUnavailable);
  EXPECT_EQ(message.find("Wrong-Pass-93"), std::string::npos) << message;
  EXPECT_NE(message.find("gemmtune:***@127.0.0.1"), std::string::npos) << message;

  auto unreachable = fmt::format("postgresql://gemmtune:Hidden-77@127.0.0.1:{}/db?connect_timeout=3",
                                 test::PgServer::freePort());
  EXPECT_EQ(exitCodeOf([&] { openStore(unreachable, {OpenMode::ReadWrite}); }, &message), kExitUnavailable);
  EXPECT_EQ(message.find("Hidden-77"), std::string::npos) << message;
}

TEST(StoreLocation, PasswordsAreMasked) {
  EXPECT_EQ(maskLocation("postgresql://u:p%40ss@h:5432/db"), "postgresql://u:***@h:5432/db");
  EXPECT_EQ(maskLocation("postgres://u@h/db?sslmode=require&password=x1"), "postgres://u@h/db?sslmode=require&password=***");
  EXPECT_EQ(maskLocation("/home/u/tune.db"), "/home/u/tune.db");
  EXPECT_EQ(sqliteFileOf("sqlite:/tmp/a.db"), "/tmp/a.db");
  EXPECT_EQ(sqliteFileOf("/tmp/a.db"), "/tmp/a.db");
  EXPECT_FALSE(sqliteFileOf("postgresql://u@h/db"));
}

}  // namespace
}  // namespace gemmtune::db
