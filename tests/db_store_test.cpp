// ResultStore: GPUs, runs and results round-trip every field; failures are stored; the newer
// measurement of a cache key wins; names with quotes and SQL are stored literally; resume.
// Run: ctest -R dbResultStore
#include "Clock.hpp"
#include "Database.hpp"
#include "SqliteStore.hpp"
#include "db_test_support.hpp"

using namespace gemmtune;
using namespace gemmtune::db;
using gemmtune::test::ScratchDir;

namespace {

struct StoreFixture : ::testing::Test {
  ScratchDir dir;
  Database db{dir / "tune.db", {OpenMode::ReadWrite, OpenCheck::Quick}};
  SqliteStore store{db};
  std::int64_t run = store.beginRun(test::testRun());
};

}  // namespace

using dbResultStore = StoreFixture;

TEST_F(dbResultStore, GpuRowKeepsEveryLimitAndIsSharedByFingerprint) {
  GpuSpec g = test::testGpu();
  EXPECT_EQ(store.recordGpu(g), store.recordGpu(g));
  auto gpus = store.gpus();
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0].fingerprint, gpuFingerprint(g));
  EXPECT_EQ(gpus[0].spec.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(gpus[0].spec.smCount, 132);
  EXPECT_EQ(gpus[0].spec.smemPerBlockOptin, 227 * 1024);
  EXPECT_EQ(gpus[0].spec.memBusWidthBits, 5120);
  EXPECT_FALSE(gpus[0].lastRunAt.empty());
  // Another board of the same model shares the fingerprint; a MIG slice (fewer SMs) does not.
  GpuSpec otherBoard = g;
  otherBoard.uuid = "GPU-9999";
  otherBoard.deviceIndex = 3;
  EXPECT_EQ(gpuFingerprint(otherBoard), gpuFingerprint(g));
  EXPECT_NE(gpuFingerprint(test::testGpu(66)), gpuFingerprint(g));
}

TEST_F(dbResultStore, ResultRoundTripsEveryField) {
  auto r = test::okResult("blocktile1d_bm64_bn64_bk8_tm8", 4096, 4096, 4096, 17000);
  r.partial = true;
  r.spillStoreBytes = 8;
  r.spillLoadBytes = 12;
  r.stackFrameBytes = 16;
  ASSERT_TRUE(store.recordResult(run, r));
  ResultFilter all;
  all.withCubin = true;
  auto rows = store.results(all);
  ASSERT_EQ(rows.size(), 1u);
  const auto& s = rows[0];
  EXPECT_EQ(s.instance(), "blocktile1d_bm64_bn64_bk8_tm8");
  EXPECT_EQ(s.family, "blocktile1d");
  EXPECT_EQ(s.params, R"({"BK":8,"BM":64,"BN":64,"TM":8})");
  EXPECT_EQ(s.key.problem, (ProblemKey{4096, 4096, 4096, "nn", "any"}));
  EXPECT_EQ(s.status, "ok");
  EXPECT_DOUBLE_EQ(*s.gflops, 17000);
  EXPECT_DOUBLE_EQ(*s.medianMs, *r.medianMs);
  EXPECT_DOUBLE_EQ(*s.minMs, *r.minMs);
  EXPECT_EQ(*s.reps, 20);
  EXPECT_TRUE(s.partial);
  EXPECT_EQ(*s.registers, 40);
  EXPECT_EQ(*s.dynamicSmemBytes, (64 + 4 + 64) * 8 * 4);
  EXPECT_EQ(*s.spillStoreBytes, 8);
  EXPECT_EQ(*s.spillLoadBytes, 12);
  EXPECT_EQ(*s.stackFrameBytes, 16);
  EXPECT_DOUBLE_EQ(*s.occupancy, 0.5);
  EXPECT_EQ(s.limiter, "registers");
  EXPECT_EQ(*s.smClockMHz, 1980);
  EXPECT_EQ(s.cubin, r.cubin);  // binary with a NUL byte survives
  EXPECT_EQ(s.loweredName, r.loweredName);
  EXPECT_EQ(s.key.sourceHash, r.key.sourceHash);
  EXPECT_EQ(s.cacheKeyHash, r.key.hash());
  EXPECT_EQ(s.gpuName, "NVIDIA H100 80GB HBM3");
  EXPECT_TRUE(isUtcTimestamp(s.measuredAt)) << s.measuredAt;
}

TEST_F(dbResultStore, FailuresAreStoredWithReasonAndErrorText) {
  auto r = test::okResult("smem_bs32", 1024, 1024, 1024, 1);
  r.setStatus("rejected:smem_per_block");
  r.medianMs.reset();
  r.gflops.reset();
  r.errorText = "49152 B > 48 KiB";
  ASSERT_TRUE(store.recordResult(run, r));
  auto c = test::okResult("smem_bs32_guarded", 1024, 1024, 1024, 1);
  c.setStatus("compile_error");
  c.medianMs.reset();
  c.errorText = "error: expected ';'";
  ASSERT_TRUE(store.recordResult(run, c));

  ResultFilter rejected;
  rejected.status = "rejected:smem_per_block";
  auto rows = store.results(rejected);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].fullStatus(), "rejected:smem_per_block");
  EXPECT_EQ(rows[0].errorText, "49152 B > 48 KiB");
  EXPECT_FALSE(rows[0].gflops.has_value());
  ResultFilter compileErrors;
  compileErrors.status = "compile_error";
  EXPECT_EQ(store.results(compileErrors).at(0).errorText, "error: expected ';'");
}

TEST_F(dbResultStore, NamesWithQuotesAndSqlAreStoredLiterally) {
  const std::string evil = "x'); DROP TABLE results; --\"";
  RunInfo info = test::testRun();
  info.commandLine = "gemmtune tune --family \"" + evil + "\"";
  info.host = evil;
  auto evilRun = store.beginRun(info);
  auto r = test::okResult("smem_bs32", 64, 64, 64, 10);
  r.key.instance = evil;
  r.family = evil;
  r.errorText = evil;
  ASSERT_TRUE(store.recordResult(evilRun, r));
  ResultFilter byFamily;
  byFamily.family = evil;
  auto rows = store.results(byFamily);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].instance(), evil);
  EXPECT_EQ(rows[0].errorText, evil);
  auto runs = store.runs();
  EXPECT_EQ(runs.back().host, evil);
  EXPECT_EQ(runs.back().commandLine, info.commandLine);
  EXPECT_EQ(db.queryInt("SELECT count(*) FROM sqlite_master WHERE name = 'results'"), 1);
}

TEST_F(dbResultStore, LaterMeasurementOfTheSameKeyWinsAndOlderIsIgnored) {
  auto first = test::okResult("smem_bs32", 512, 512, 512, 100);
  first.measuredAt = "2025-01-01T00:00:00.000000Z";
  auto later = first;
  later.gflops = 200;
  later.measuredAt = "2025-06-01T00:00:00.000000Z";
  auto older = first;
  older.gflops = 50;
  older.measuredAt = "2024-01-01T00:00:00.000000Z";
  EXPECT_TRUE(store.recordResult(run, first));
  EXPECT_TRUE(store.recordResult(run, later));
  EXPECT_FALSE(store.recordResult(run, older));
  EXPECT_FALSE(store.recordResult(run, later));  // same time stamp: unchanged
  auto rows = store.results({});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_DOUBLE_EQ(*rows[0].gflops, 200);
  EXPECT_EQ(rows[0].measuredAt, "2025-06-01T00:00:00.000000Z");
}

TEST_F(dbResultStore, FinalStatusesDriveResume) {
  auto ok = test::okResult("smem_bs32", 256, 256, 256, 100);
  auto died = test::okResult("smem_bs32_guarded", 256, 256, 256, 1);
  died.setStatus("worker_died");
  auto fault = test::okResult("blocktile1d_bm64_bn64_bk8_tm8", 256, 256, 256, 1);
  fault.setStatus("runtime_fault:CUDA_ERROR_ILLEGAL_ADDRESS");
  auto pruned = test::okResult("blocktile1d_bm64_bn64_bk8_tm8_guarded", 256, 256, 256, 1);
  pruned.setStatus("pruned:slower_than_best");
  for (const auto* r : {&ok, &died, &fault, &pruned}) store.recordResult(run, *r);

  auto final = store.finalStatuses(test::testGpu());
  EXPECT_EQ(final.size(), 2u);
  EXPECT_EQ(final.at(ok.key.hash()), "ok");
  EXPECT_EQ(final.at(fault.key.hash()), "runtime_fault:CUDA_ERROR_ILLEGAL_ADDRESS");
  EXPECT_FALSE(final.contains(died.key.hash()));
  EXPECT_FALSE(final.contains(pruned.key.hash()));
  // A new NVRTC version makes a new key: the candidate is measured again.
  auto upgraded = ok.key;
  upgraded.nvrtcVersion = "13.1";
  EXPECT_FALSE(final.contains(upgraded.hash()));
  EXPECT_TRUE(store.finalStatuses(test::testGpu(66)).empty());
}

TEST_F(dbResultStore, InvalidRecordsAreRefusedWithTheField) {
  auto expectRefused = [&](ResultRecord r, const std::string& needle) {
    try {
      store.recordResult(run, r);
      ADD_FAILURE() << "accepted: " << needle;
    } catch (const DataError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  auto good = test::okResult("smem_bs32", 64, 64, 64, 10);
  auto r = good;
  r.status = "great";
  expectRefused(r, "unknown status 'great'");
  r = good;
  r.key.problem.m = 0;
  expectRefused(r, "not positive");
  r = good;
  r.medianMs.reset();
  expectRefused(r, "positive, finite median");
  r = good;
  r.occupancy = -1;
  expectRefused(r, "not negative");
  r = good;
  r.measuredAt = "yesterday";
  expectRefused(r, "not a UTC time stamp");
  EXPECT_EQ(db.queryInt("SELECT count(*) FROM results"), 0);
  // A result must belong to its run's GPU.
  auto other = test::okResult("smem_bs32", 64, 64, 64, 10, test::testGpu(66));
  EXPECT_THROW(store.recordResult(run, other), UsageError);
}

TEST_F(dbResultStore, BaselinesKeepTheLatestMeasurement) {
  BaselineRecord b;
  b.libraryVersion = "12.9";
  b.problem = {4096, 4096, 4096};
  b.medianMs = 2.0 * 4096.0 * 4096 * 4096 / (50000 * 1e6);
  b.measuredAt = "2025-01-01T00:00:00.000000Z";
  EXPECT_TRUE(store.recordBaseline(run, b));
  auto gpuId = store.gpus().at(0).id;
  EXPECT_NEAR(*store.baselineGflops(gpuId, {4096, 4096, 4096}), 50000, 1e-6);
  EXPECT_FALSE(store.baselineGflops(gpuId, {2048, 2048, 2048}).has_value());
  b.measuredAt = "2024-01-01T00:00:00.000000Z";
  b.medianMs *= 2;
  EXPECT_FALSE(store.recordBaseline(run, b));
  EXPECT_NEAR(*store.baselineGflops(gpuId, {4096, 4096, 4096}), 50000, 1e-6);
}
