// The results-store interface on both backends: the same cases run against a SQLite file and a
// PostgreSQL server that the test starts itself (tests/pg_server.hpp; skipped with a message
// when the server binaries are missing). Also: refusal of a foreign or newer PostgreSQL schema,
// 8 concurrent writer processes (nothing lost, no duplicates, the later measurement wins, rows/s
// printed), batch writes that are all or nothing, and credentials masked in errors.
// Run: ctest -R store
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <set>

#include "Clock.hpp"
#include "ExitCodes.hpp"
#include "ResultStore.hpp"
#include "Schema.hpp"
#include "store_test_support.hpp"

namespace gemmtune::db {
namespace {

using test::okResult;
using test::testGpu;
using test::testRun;

using test::stamp;
using StoreTest = test::BackendTest;
ResultRecord row(int i, const std::string& measuredAt) { return test::keyedRow(i, measuredAt); }

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

// 8 tuner processes, 10 000 rows: each opens its own store and writes 1 200 keys of its own and
// the same 50 shared keys, each with its own measured_at; the writer with the latest time must
// win. Processes, not threads: what a cluster of tuners does to one store.
TEST_P(StoreTest, ConcurrentWriterProcessesLoseNothing) {
  constexpr int kWriters = 8, kRowsEach = 1250, kShared = 50;
  open();  // the schema, once; no connection stays open across fork()
  auto start = std::chrono::steady_clock::now();
  std::vector<pid_t> writers;
  for (int w = 0; w < kWriters; ++w) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0) << "fork failed";
    if (pid == 0) {
      int code = 0;
      try {
        auto store = open();
        auto run = store->beginRun(testRun());
        for (int i = 0; i < kRowsEach - kShared; ++i) store->recordResult(run, row(1000 + w * kRowsEach + i, stamp(1)));
        for (int s = 0; s < kShared; ++s) {
          ResultRecord r = row(s, stamp(100 + (w + s) % kWriters));  // writer (15 - s % 8) % 8 is latest
          r.smClockMHz = w;
          store->recordResult(run, r);
        }
        store->endRun(run);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "writer %d: %s\n", w, e.what());
        code = 1;
      }
      std::fflush(nullptr);
      ::_exit(code);  // no gtest teardown in the child
    }
    writers.push_back(pid);
  }
  int failed = 0;
  for (pid_t pid : writers) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(failed, 0) << "writer processes failed (their messages are above)";
  auto rows = open(OpenMode::ReadOnly)->results({});
  std::printf("[ store ] %s: %d rows from %d concurrent writer processes in %.2f s: %.0f rows/s\n",
              GetParam().c_str(), kWriters * kRowsEach, kWriters, seconds, kWriters * kRowsEach / seconds);
  EXPECT_EQ(rows.size(), static_cast<std::size_t>(kWriters * (kRowsEach - kShared) + kShared)) << "lost rows";
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
  auto runs = open(OpenMode::ReadOnly)->runs();
  EXPECT_EQ(runs.size(), static_cast<std::size_t>(kWriters));
  for (const auto& run : runs) EXPECT_FALSE(run.endedAt.empty()) << run.uid;
  EXPECT_EQ(open(OpenMode::ReadOnly)->gpus().size(), 1u);
}

// Batch writes (recordResults, mergeBatch) are one transaction: all rows or none.
TEST_P(StoreTest, ABatchIsWrittenWholeOrNotAtAll) {
  auto store = open();
  auto run = store->beginRun(testRun());
  std::vector<ResultRecord> batch;
  for (int i = 0; i < 100; ++i) batch.push_back(row(i, stamp(10)));
  EXPECT_EQ(store->recordResults(run, batch), 100u);
  EXPECT_EQ(store->recordResults(run, batch), 0u);  // the same measurements again: ties keep the rows
  std::vector<ResultRecord> later = batch;
  for (auto& r : later) r.measuredAt = stamp(20);
  later.push_back(row(500, stamp(20)));
  later.back().key.gpuFingerprint = gpuFingerprint(testGpu(100));  // another GPU than the run's
  EXPECT_THROW(store->recordResults(run, later), UsageError);
  later.back().medianMs = -1.0;  // invalid: refused before anything is written
  EXPECT_THROW(store->recordResults(run, later), DataError);
  auto rows = store->results({});
  ASSERT_EQ(rows.size(), 100u);
  for (const auto& r : rows) EXPECT_EQ(r.measuredAt, stamp(10));

  RecordBatch merge;
  GpuSpec other = testGpu(114);
  merge.gpus.emplace(gpuFingerprint(other), RecordBatch::Gpu{other, stamp(1)});
  RunInfo info = testRun(other);
  info.uid = "imported-run";
  merge.runs.push_back(info);
  merge.runGpu.emplace(info.uid, gpuFingerprint(other));
  for (int i = 0; i < 10; ++i) {
    ResultRecord r = okResult("smem_bs32", 64 + i, 4096, 4096, 900, other);
    r.measuredAt = stamp(30);
    merge.results.push_back({r, info.uid});
  }
  merge.results.push_back({okResult("smem_bs32", 4096, 4096, 4096, 900, other), "no-such-run"});
  EXPECT_THROW(store->mergeBatch(merge), DataError);
  EXPECT_EQ(store->gpus().size(), 1u);
  merge.results.pop_back();
  MergeSummary s = store->mergeBatch(merge);
  EXPECT_EQ(s.gpusAdded, 1u);
  EXPECT_EQ(s.runsAdded, 1u);
  EXPECT_EQ(s.resultsWritten, 10u);
  s = store->mergeBatch(merge);
  EXPECT_EQ(s.gpusAdded + s.runsAdded + s.resultsWritten, 0u);
  EXPECT_EQ(s.resultsUnchanged, 10u);
  EXPECT_EQ(store->gpus()[1].firstSeen, stamp(1));  // kept from the batch
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreTest, test::backendNames(), test::backendName);

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

// One logical schema: PostgreSQL gets SQLite's types and SQLite's order of NULLs in descending
// index columns (else the lookup's ORDER BY gflops DESC NULLS LAST could not walk the index).
TEST(StoreSchema, PostgresDdlKeepsSqliteTypesAndOrder) {
  EXPECT_EQ(postgresSql("CREATE INDEX i ON t(a, gflops DESC);"), "CREATE INDEX i ON t(a, gflops DESC NULLS LAST);");
  EXPECT_EQ(postgresSql("x REAL, y BLOB, DESCRIPTION TEXT"), "x DOUBLE PRECISION, y BYTEA, DESCRIPTION TEXT COLLATE \"C\"");
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
