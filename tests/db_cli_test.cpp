// The results commands as a user runs them: query, results, export, import, db backup/check —
// including missing, damaged and newer databases.
// Run: ctest -R dbCli
#include <nlohmann/json.hpp>

#include <sstream>

#include "CliRunner.hpp"
#include "ExitCodes.hpp"
#include "Database.hpp"
#include "SqliteStore.hpp"
#include "Schema.hpp"
#include "cublas_test_support.hpp"
#include "db_test_support.hpp"

using namespace gemmtune;
using namespace gemmtune::db;
using gemmtune::test::runCli;

namespace {

struct CliFixture : test::ScratchDbTest {
  void populate() {
    Database database(db, {OpenMode::ReadWrite, OpenCheck::Quick});
    SqliteStore store(database);
    auto run = test::recordTwoOkRows(store);
    auto failed = test::okResult("smem_bs32_guarded", 4096, 4096, 4096, 1);
    failed.setStatus("rejected:smem_per_block");
    failed.medianMs.reset();
    failed.gflops.reset();
    store.recordResult(run, failed);
    BaselineRecord b;
    b.libraryVersion = "12.9";
    b.problem = {4096, 4096, 4096};
    b.medianMs = 2.0 * 4096.0 * 4096 * 4096 / (50000 * 1e6);
    store.recordBaseline(run, b);
  }
  // testGpu() with its 1.98 GHz boost clock: low clocks and impossible speeds are judged against it.
  static GpuSpec clockedGpu() {
    GpuSpec gpu = test::testGpu();
    gpu.clockKhz = 1980000;
    return gpu;
  }
  // `rows`, recorded in one run of `gpu`.
  void record(const GpuSpec& gpu, const std::vector<ResultRecord>& rows) {
    Database database(db, {OpenMode::ReadWrite, OpenCheck::Quick});
    SqliteStore store(database);
    auto run = store.beginRun(test::testRun(gpu));
    for (const auto& r : rows) ASSERT_TRUE(store.recordResult(run, r)) << r.instance();
  }
};

}  // namespace

using dbCli = CliFixture;

TEST_F(dbCli, QueryWithoutADatabaseSaysToTuneFirst) {
  auto r = runCli({"query", "--db", db, "--gpu", "h100", "--size", "4096"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.err.find("run `gemmtune tune` first"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(db));
  auto env = runCli({"query", "--size", "4096"}, {"GEMMTUNE_DB=" + db});
  EXPECT_EQ(env.exitCode, 1);
  EXPECT_NE(env.err.find(db), std::string::npos) << env.err;
}

// The hint for a problem nothing answers is a command that tunes exactly that problem (it named
// `--sizes 512x512x512 batch 64`, which tune refuses, and dropped the layout).
TEST_F(dbCli, QueryWithNothingToAnswerNamesTheTuneCommandForThatProblem) {
  populate();
  auto r = runCli({"query", "--db", db, "--gpu", "H100", "--mnk", "512x256x128", "--layout", "tn", "--batch", "64",
                   "--family", "warptile"});
  EXPECT_EQ(r.exitCode, 1) << r.out;
  EXPECT_NE(r.err.find("at 512x256x128 tn batch 64 in family warptile"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("run `gemmtune tune --sizes 512x256x128 --layouts tn --batch 64` first"), std::string::npos)
      << r.err;
}

// A tensor-core family answers only at its own problem; the hint tunes that problem in its class
// (`tune` leaves tensor-core families out by default, so the plain hint could never give the row).
TEST_F(dbCli, QueryForATensorCoreFamilyHintsItsPrecision) {
  populate();
  auto r = runCli({"query", "--db", db, "--gpu", "H100", "--size", "3000", "--family", "tf32x3", "--precision",
                   "Faithful"});  // in any letter case, as $GEMMTUNE_PRECISION
  EXPECT_EQ(r.exitCode, 1) << r.out;
  EXPECT_NE(r.err.find("serves only the exact problem"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("run `gemmtune tune --sizes 3000 --precision faithful --families tf32x3` first"),
            std::string::npos)
      << r.err;
}

// cuBLAS measured fastest answers; --kernels-only answers as a library without cuBLAS would.
TEST_F(dbCli, QueryKernelsOnlyLeavesCublasOut) {
  populate();
  record(test::testGpu(), {test::cublasResult("nn", 4096, 4096, 4096, 50000)});
  auto withCublas = runCli({"query", "--db", db, "--gpu", "H100", "--size", "4096", "--json"});
  ASSERT_EQ(withCublas.exitCode, 0) << withCublas.err;
  EXPECT_EQ(nlohmann::json::parse(withCublas.out)["instance"], "cublas_nn");
  auto kernels = runCli({"query", "--db", db, "--gpu", "H100", "--size", "4096", "--json", "--kernels-only"});
  ASSERT_EQ(kernels.exitCode, 0) << kernels.err;
  EXPECT_EQ(nlohmann::json::parse(kernels.out)["instance"], "blocktile1d_bm64_bn64_bk8_tm8");
}

TEST_F(dbCli, QueryShowsBestMatchAndPercentOfCublas) {
  populate();
  auto r = runCli({"query", "--db", db, "--gpu", "H100", "--size", "4096", "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["match"], "exact");
  EXPECT_EQ(j["instance"], "blocktile1d_bm64_bn64_bk8_tm8");
  EXPECT_NEAR(j["gflops"].get<double>(), 17000, 1e-6);
  EXPECT_NEAR(j["percent_of_cublas"].get<double>(), 34.0, 1e-6);
  EXPECT_EQ(j["ptx_command"], "gemmtune ptx blocktile1d_bm64_bn64_bk8_tm8 --arch sm_90 --stats");

  // A family named: ours, however cuBLAS is predicted (the baseline above is 3× faster than the rows).
  auto near = runCli({"query", "--db", db, "--gpu", "nvidia h100 80gb hbm3", "--mnk", "4000x4096x4096", "--family",
                      "blocktile1d"});
  ASSERT_EQ(near.exitCode, 0) << near.err;
  EXPECT_NE(near.out.find("blocktile1d_bm64_bn64_bk8_tm8_guarded"), std::string::npos) << near.out;
  EXPECT_NE(near.out.find("nearest_size"), std::string::npos) << near.out;
  // Why that row: the family model's time at the asked size, from where.
  EXPECT_NE(near.out.find("because fastest predicted here (blocktile1d_bm64_bn64_bk8_tm8_guarded at "), std::string::npos)
      << near.out;
  EXPECT_NE(near.out.find("ms by the family model, from "), std::string::npos) << near.out;
  EXPECT_NE(near.out.find("at 4096x4096x4096; best of"), std::string::npos) << near.out;
  auto nearJson = runCli({"query", "--db", db, "--gpu", "H100", "--mnk", "4000x4096x4096", "--json", "--family",
                          "blocktile1d"});
  auto nj = nlohmann::json::parse(nearJson.out);
  EXPECT_GT(nj["predicted_ms"].get<double>(), 0) << nearJson.out;
  // K 4000 < 4096, same waves (the guarded form, never measured, is counted double only where
  // it is ranked and weighed against cuBLAS; the reason says so).
  EXPECT_LT(nj["predicted_ms"].get<double>(), nj["median_ms"].get<double>()) << nearJson.out;
  EXPECT_NE(nearJson.out.find("counted slower: a guarded form, or more K slices, than measured"), std::string::npos) << nearJson.out;

  auto family = runCli({"query", "--db", db, "--gpu", "H100", "--size", "4096", "--family", "smem", "--json"});
  EXPECT_EQ(nlohmann::json::parse(family.out)["instance"], "smem_bs32");
  auto none = runCli({"query", "--db", db, "--gpu", "A100", "--size", "4096"});
  EXPECT_EQ(none.exitCode, 2);
  EXPECT_NE(none.err.find("no GPU 'A100' in the database"), std::string::npos) << none.err;
  // A number is a GPU of this machine by index (`tune --gpu all` then `query --gpu 1`), never a
  // part of a stored name ("NVIDIA H100 80GB HBM3" contains an 8): no GPU 8 here.
  auto index = runCli({"query", "--db", db, "--gpu", "8", "--size", "4096"});
  EXPECT_NE(index.exitCode, 0) << index.out;
  EXPECT_NE(index.err.find("--gpu 8"), std::string::npos) << index.err;
  // No detector is registered in this build: auto falls back to the only stored GPU.
  auto autoGpu = runCli({"query", "--db", db, "--size", "4096", "--json"});
  EXPECT_EQ(autoGpu.exitCode, 0) << autoGpu.err;
}

TEST_F(dbCli, ResultsListsFailuresAndFiltersByStatus) {
  populate();
  auto all = runCli({"results", "--db", db, "--json"});
  ASSERT_EQ(all.exitCode, 0) << all.err;
  auto rows = nlohmann::json::parse(all.out);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0]["instance"], "blocktile1d_bm64_bn64_bk8_tm8");
  EXPECT_EQ(rows[2]["status"], "rejected:smem_per_block");
  EXPECT_EQ(rows[0]["stale"], false);

  auto csv = runCli({"results", "--db", db, "--status", "ok", "--csv"});
  ASSERT_EQ(csv.exitCode, 0) << csv.err;
  EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), 3);  // header + 2 ok rows
  EXPECT_EQ(csv.out.rfind("gpu,m,n,k,", 0), 0u);

  auto table = runCli({"results", "--db", db, "--size", "4096", "--family", "smem"});
  EXPECT_NE(table.out.find("rejected:smem_per_block"), std::string::npos) << table.out;
  EXPECT_EQ(table.out.find("blocktile1d"), std::string::npos);
}

// Layout and batch: in the table's size column (nn single products as before), in --json and
// --csv, and as filters; a bad filter value is a usage error naming the option.
TEST_F(dbCli, ResultsShowAndFilterLayoutAndBatch) {
  auto batched = test::okResult("smem_bs32", 512, 512, 512, 9000);
  batched.key.problem.layout = "tn";
  batched.key.problem.batch = 64;
  auto transposed = test::okResult("smem_bs32", 512, 512, 512, 8000);
  transposed.key.problem.layout = "nt";
  record(test::testGpu(), {test::okResult("smem_bs32", 512, 512, 512, 7000), batched, transposed});

  auto table = runCli({"results", "--db", db});
  ASSERT_EQ(table.exitCode, 0) << table.err;
  EXPECT_NE(table.out.find("512x512x512 tn batch 64 "), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("512x512x512 nt "), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("\n512x512x512       "), std::string::npos) << table.out;  // nn, batch 1: no suffix
  // Every line's columns line up: "instance" stands where each row's instance starts.
  std::istringstream lines(table.out);
  std::string header, line;
  std::getline(lines, header);
  const auto column = header.find("instance");
  while (std::getline(lines, line)) EXPECT_EQ(line.compare(column, 9, "smem_bs32"), 0) << table.out;

  auto json = runCli({"results", "--db", db, "--layout", "tn", "--batch", "64", "--json"});
  ASSERT_EQ(json.exitCode, 0) << json.err;
  auto rows = nlohmann::json::parse(json.out);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["layout"], "tn");
  EXPECT_EQ(rows[0]["batch"], 64);
  auto single = runCli({"results", "--db", db, "--batch", "1", "--json"});
  EXPECT_EQ(nlohmann::json::parse(single.out).size(), 2u) << single.err;

  auto csv = runCli({"results", "--db", db, "--layout", "tn", "--csv"});
  ASSERT_EQ(csv.exitCode, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("gpu,m,n,k,layout,batch,beta_class,", 0), 0u) << csv.out;
  EXPECT_NE(csv.out.find(",512,512,512,tn,64,any,smem_bs32,"), std::string::npos) << csv.out;

  auto badLayout = runCli({"results", "--db", db, "--layout", "TN"});
  EXPECT_EQ(badLayout.exitCode, kExitUsage);
  EXPECT_NE(badLayout.err.find("--layout 'TN': expected nn, nt, tn or tt"), std::string::npos) << badLayout.err;
  auto badBatch = runCli({"results", "--db", db, "--batch", "0"});
  EXPECT_EQ(badBatch.exitCode, kExitUsage);
  EXPECT_NE(badBatch.err.find("--batch 0: expected a batch count of 1 or more"), std::string::npos) << badBatch.err;
}

// A row timed far below its GPU's boost clock is marked in every output form.
TEST_F(dbCli, ResultsMarkRowsTimedAtALowClock) {
  const GpuSpec gpu = clockedGpu();
  auto atSpeed = test::okResult("blocktile1d_bm64_bn64_bk8_tm8", 4096, 4096, 4096, 17000, gpu);
  atSpeed.smClockMHz = 1980;
  auto slow = test::okResult("smem_bs32", 4096, 4096, 4096, 9000, gpu);
  slow.smClockMHz = 345;
  record(gpu, {atSpeed, slow});
  auto json = runCli({"results", "--db", db, "--json"});
  ASSERT_EQ(json.exitCode, 0) << json.err;
  for (const auto& row : nlohmann::json::parse(json.out))
    EXPECT_EQ(row["low_clock"], row["instance"] == "smem_bs32") << row.dump();
  auto table = runCli({"results", "--db", db});
  EXPECT_NE(table.out.find("345 low"), std::string::npos) << table.out;
  EXPECT_EQ(table.out.find("1980 low"), std::string::npos) << table.out;
  auto csv = runCli({"results", "--db", db, "--csv"});
  EXPECT_NE(csv.out.find(",345,1,"), std::string::npos) << csv.out;
}

// A row claiming more than its GPU's FP32 peak (1.1 × 66.9 TFLOP/s here): `query` serves the next
// row and says why once; `results` lists the row, marked in every output form.
TEST_F(dbCli, ImplausiblyFastRowIsNotServedAndIsMarked) {
  const GpuSpec gpu = clockedGpu();
  record(gpu, {test::okResult("blocktile1d_bm64_bn64_bk8_tm8", 4096, 4096, 4096, 1e9, gpu),
               test::okResult("smem_bs32", 4096, 4096, 4096, 9000, gpu)});
  auto q = runCli({"query", "--db", db, "--gpu", "H100", "--size", "4096", "--json"});
  ASSERT_EQ(q.exitCode, 0) << q.err;
  EXPECT_EQ(nlohmann::json::parse(q.out)["instance"], "smem_bs32") << q.out;
  auto said = [](const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(said(q.err, "warning: skipping stored result"), 1u) << q.err;
  EXPECT_EQ(said(q.err, "implausible speed: 1e+09 GFLOP/s stored, above the 73599 GFLOP/s"), 1u) << q.err;

  auto json = runCli({"results", "--db", db, "--json"});
  ASSERT_EQ(json.exitCode, 0) << json.err;
  for (const auto& row : nlohmann::json::parse(json.out))
    EXPECT_EQ(row["implausible"].is_string(), row["instance"] == "blocktile1d_bm64_bn64_bk8_tm8") << row.dump();
  auto table = runCli({"results", "--db", db});
  EXPECT_EQ(said(table.out, "implausible speed"), 1u) << table.out;
  auto csv = runCli({"results", "--db", db, "--csv"});
  EXPECT_NE(csv.out.find(",gpu_uuid,implausible\n"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find(",GPU-1234,1\n"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find(",GPU-1234,0\n"), std::string::npos) << csv.out;
}

TEST_F(dbCli, ResultsJudgesStaleRowsAsTheReportDoes) {
  populate();
  // Rejected by a static constraint (TM does not divide BM): a name parseName() refuses.
  Config c{FamilyRegistry::builtin().find("blocktile1d"), {16, 64, 8, 32}, false};
  {
    Database database(db, {OpenMode::ReadWrite, OpenCheck::Quick});
    SqliteStore store(database);
    auto run = store.beginRun(test::testRun());
    auto rejected = test::currentRecord(c, 2048, 2048, 2048);
    rejected.setStatus("rejected:constraint");
    ASSERT_TRUE(store.recordResult(run, rejected));
    auto misfiled = test::okResult("smem_bs16", 2048, 2048, 2048, 8000);
    misfiled.family = "blocktile1d";
    ASSERT_TRUE(store.recordResult(run, misfiled));
    store.endRun(run);
  }
  auto r = runCli({"results", "--db", db, "--size", "2048", "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto rows = nlohmann::json::parse(r.out);
  ASSERT_EQ(rows.size(), 2u) << r.out;
  for (const auto& row : rows) {
    if (row["instance"] == c.name()) {
      EXPECT_EQ(row["stale"], false) << row.dump();
    } else {
      EXPECT_EQ(row["stale_reasons"], nlohmann::json::array({"family does not match the instance name"}))
          << row.dump();
    }
  }
}

TEST_F(dbCli, DamagedOrNewerDatabaseExits65AndIsLeftAlone) {
  test::writeBytes(db, "this is not a database, just text that is long enough to look like a header....");
  std::string before = test::readBytes(db);
  for (auto args : std::vector<std::vector<std::string>>{{"query", "--db", db, "--size", "64"},
                                                         {"results", "--db", db},
                                                         {"export", "--db", db, (dir / "x.json").string()}}) {
    auto r = runCli(args);
    EXPECT_EQ(r.exitCode, 65) << args[0] << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  EXPECT_EQ(test::readBytes(db), before);

  std::filesystem::remove(db);
  populate();
  {
    Database database(db, {OpenMode::ReadWrite, OpenCheck::Quick});
    database.exec("PRAGMA user_version = 42");
  }
  auto r = runCli({"results", "--db", db});
  EXPECT_EQ(r.exitCode, 65);
  EXPECT_NE(r.err.find("schema version 42, newer than this gemmtune understands"), std::string::npos) << r.err;
}

TEST_F(dbCli, ExportImportIsIdempotentAndBackupIsComplete) {
  populate();
  std::string file = (dir / "export.json").string(), merged = (dir / "merged.db").string();
  auto e = runCli({"export", "--db", db, file});
  ASSERT_EQ(e.exitCode, 0) << e.err;
  auto first = runCli({"import", "--db", merged, file});
  ASSERT_EQ(first.exitCode, 0) << first.err;
  EXPECT_NE(first.out.find("3 results written, 0 unchanged"), std::string::npos) << first.out;
  auto second = runCli({"import", "--db", merged, file});
  EXPECT_NE(second.out.find("0 results written, 3 unchanged"), std::string::npos) << second.out;

  test::writeBytes(dir / "bad.json", R"({"format": "gemmtune-results", "version": 1, "gpus": 5})");
  auto bad = runCli({"import", "--db", merged, (dir / "bad.json").string()});
  EXPECT_EQ(bad.exitCode, 65);
  EXPECT_NE(bad.err.find("'gpus' must be an array"), std::string::npos) << bad.err;
  auto fresh = runCli({"import", "--db", (dir / "never.db").string(), (dir / "bad.json").string()});
  EXPECT_EQ(fresh.exitCode, 65);
  EXPECT_FALSE(std::filesystem::exists(dir / "never.db"));  // a bad file creates nothing

  std::string copy = (dir / "copy.db").string();
  auto b = runCli({"db", "backup", copy, "--db", merged});
  ASSERT_EQ(b.exitCode, 0) << b.err;
  auto check = runCli({"db", "check", "--db", copy});
  EXPECT_EQ(check.exitCode, 0) << check.err;
  EXPECT_NE(check.out.find("ok (schema 3, 3 results, 1 runs, 1 GPUs)"), std::string::npos) << check.out;
}
