// `gemmtune export` and `gemmtune import` on both backends (issue 14): a store's rows — two
// GPUs, failures, cuBLAS baselines, cubins with NULs — exported through the CLI, imported into a
// new store of either backend, equal the source field by field; importing twice adds nothing; an
// empty store exports nothing (exit 1); the password appears in no output.
// Run: ctest -R StoreExchange
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "CliRunner.hpp"
#include "JsonExchange.hpp"
#include "store_test_support.hpp"
#include "ExitCodes.hpp"

namespace gemmtune::db {
namespace {

using test::okResult;
using test::runCli;
using StoreExchange = test::BackendTest;

void fill(ResultStore& store) {
  for (const auto& gpu : {test::testGpu(), test::testGpu(108)}) {
    auto run = store.beginRun(test::testRun(gpu));
    auto a = okResult("blocktile1d_bm64_bn64_bk8_tm8", 4096, 4096, 4096, 17000, gpu);
    a.cubin = std::string("\x7f" "ELF\0\x01\xff", 7) + std::to_string(gpu.smCount);
    a.measuredAt = "2025-01-31T12:00:01.000000Z";
    auto bad = test::compileError("smem_bs16", 4096, 4096, 4096, gpu);
    store.recordResults(run, std::vector<ResultRecord>{a, bad, okResult("smem_bs32", 2048, 2048, 2048, 9000, gpu)});
    store.recordBaseline(run, test::cublasBaseline(4096, 2.5, "13.0.0"));
    store.endRun(run);
  }
}

std::vector<StoredResult> allRows(const ResultStore& store) {
  ResultFilter f;
  f.withCubin = true;
  auto rows = store.results(f);
  std::sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) { return x.cacheKeyHash < y.cacheKeyHash; });
  return rows;
}

void expectSameRows(const ResultStore& want, const ResultStore& got) {
  auto a = allRows(want), b = allRows(got);
  ASSERT_EQ(b.size(), a.size());
  for (std::size_t i = 0; i < a.size(); ++i) test::expectSameMeasurement(b[i], a[i]);
  EXPECT_EQ(got.runs().size(), want.runs().size());
  EXPECT_EQ(got.gpus().size(), want.gpus().size());
  EXPECT_EQ(got.baselines().size(), want.baselines().size());
}

TEST_P(StoreExchange, ExportAndImportThroughTheCliOnEitherBackend) {
  fill(*open());
  auto file = (dir_ / "out.json").string();
  auto exported = runCli({"export", "--db", location_, file});
  ASSERT_EQ(exported.exitCode, 0) << exported.err;
  EXPECT_NE(exported.err.find("exported 6 results, 2 baselines, 2 runs, 2 GPUs"), std::string::npos) << exported.err;

  // Into a new store of the same backend and into a SQLite file.
  for (const std::string& target : {otherLocation("same_backend"), "sqlite:" + (dir_ / "copy.db").string()}) {
    auto imported = runCli({"import", "--db", target, file});
    ASSERT_EQ(imported.exitCode, 0) << imported.err;
    EXPECT_NE(imported.out.find("6 results written, 0 unchanged"), std::string::npos) << imported.out;
    EXPECT_NE(imported.out.find("2 GPUs and 2 runs added"), std::string::npos) << imported.out;
    auto again = runCli({"import", "--db", target, file});
    ASSERT_EQ(again.exitCode, 0) << again.err;
    EXPECT_NE(again.out.find("0 results written, 6 unchanged"), std::string::npos) << again.out;
    EXPECT_NE(again.out.find("0 GPUs and 0 runs added"), std::string::npos) << again.out;
    expectSameRows(*open(OpenMode::ReadOnly), *openStore(target, {OpenMode::ReadOnly}));
    for (const auto& out : {exported.out, exported.err, imported.out, imported.err})
      EXPECT_EQ(out.find(test::PgServer::kPassword), std::string::npos) << out;
  }
}

// A server database without tables, a 0-byte file: no results yet, not damage.
TEST_P(StoreExchange, AnEmptyStoreHasNothingToExport) {
  std::string empty = otherLocation("empty");
  if (!server_) test::writeBytes(*sqliteFileOf(empty), "");
  auto res = runCli({"export", "--db", empty, (dir_ / "x.json").string()});
  EXPECT_EQ(res.exitCode, 1) << res.err;
  EXPECT_NE(res.err.find("no tuning results yet"), std::string::npos) << res.err;
  EXPECT_EQ(res.err.find(test::PgServer::kPassword), std::string::npos) << res.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "x.json"));
}

TEST_P(StoreExchange, AMalformedImportLeavesTheStoreUntouched) {
  fill(*open());
  auto file = dir_ / "bad.json";
  {
    std::ostringstream text;
    exportJson(*open(OpenMode::ReadOnly), text);
    auto doc = nlohmann::json::parse(text.str());
    doc["results"][1]["nvrtc_version"] = "99.9";  // its cache key no longer matches
    test::writeBytes(file, doc.dump());
  }
  auto before = allRows(*open(OpenMode::ReadOnly));
  auto res = runCli({"import", "--db", location_, file.string()});
  EXPECT_EQ(res.exitCode, kExitDataError) << res.err;
  EXPECT_NE(res.err.find("nothing was imported"), std::string::npos) << res.err;
  EXPECT_EQ(allRows(*open(OpenMode::ReadOnly)).size(), before.size());
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreExchange, test::backendNames(), test::backendName);

}  // namespace
}  // namespace gemmtune::db
