// JsonExchange: export → import reproduces every row; importing twice adds nothing; an older
// file never overwrites a newer measurement; malformed files are refused whole.
// Run: ctest -R dbExchange
#include <nlohmann/json.hpp>
#include <sstream>

#include "Database.hpp"
#include "SqliteStore.hpp"
#include "JsonExchange.hpp"
#include "db_test_support.hpp"
#include "ExitCodes.hpp"

using namespace gemmtune;
using namespace gemmtune::db;
using gemmtune::test::ScratchDir;
using nlohmann::json;

namespace {

struct ExchangeFixture : ::testing::Test {
  ScratchDir dir;
  Database source{dir / "a.db", {OpenMode::ReadWrite, OpenCheck::Quick}};
  Database target{dir / "b.db", {OpenMode::ReadWrite, OpenCheck::Quick}};

  void SetUp() override {
    SqliteStore store(source);
    auto run = store.beginRun(test::testRun());
    auto ok = test::okResult("blocktile1d_bm64_bn64_bk8_tm8", 4096, 4096, 4096, 17000);
    ok.measuredAt = "2025-03-01T00:00:00.000000Z";
    store.recordResult(run, ok);
    store.recordResult(run, test::compileError("smem_bs32", 4096, 4096, 4096));
    store.recordBaseline(run, test::cublasBaseline(4096, 2.7, "12.9"));
    store.endRun(run);
  }

  std::string exported(Database& db) {
    std::ostringstream out;
    exportJson(SqliteStore(db), out);
    return out.str();
  }
  ImportSummary importText(const std::string& text) {
    SqliteStore store(target);
    return importExchange(store, parseExchange(text, "test.json"));
  }
  // The export of `db` without its own time stamp: equal for equal data.
  json exportedRows(Database& db) {
    json doc = json::parse(exported(db));
    doc.erase("exported_at");
    return doc;
  }
  // The target's results, `count` of them, each the same measurement as the source's.
  std::vector<StoredResult> expectTargetHasTheSourceResults(size_t count) {
    ResultFilter all;
    all.withCubin = true;
    auto a = SqliteStore(source).results(all), b = SqliteStore(target).results(all);
    EXPECT_EQ(b.size(), count);
    EXPECT_EQ(a.size(), count);
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) test::expectSameMeasurement(b[i], a[i]);
    return b;
  }
};

}  // namespace

using dbExchange = ExchangeFixture;

TEST_F(dbExchange, ExportThenImportReproducesEveryRow) {
  std::string text = exported(source);
  json doc = json::parse(text);
  EXPECT_EQ(doc["format"], "gemmtune-results");
  EXPECT_EQ(doc["version"], 2);
  EXPECT_EQ(doc["results"][0]["layout"], "nn");
  EXPECT_EQ(doc["results"][0]["batch"], 1);
  EXPECT_EQ(doc["baselines"][0]["batch"], 1);
  EXPECT_EQ(doc["results"].size(), 2u);
  EXPECT_EQ(doc["gpus"][0]["sm_count"], 132);

  auto s = importText(text);
  EXPECT_EQ(s.resultsWritten, 2u);
  EXPECT_EQ(s.gpusAdded, 1u);
  EXPECT_EQ(s.runsAdded, 1u);
  EXPECT_EQ(s.baselinesWritten, 1u);
  expectTargetHasTheSourceResults(2);
  // Same data, so the second export equals the first apart from its own time stamp.
  doc.erase("exported_at");
  EXPECT_EQ(exportedRows(target), doc);
}

TEST_F(dbExchange, ImportingTwiceAddsNothing) {
  std::string text = exported(source);
  importText(text);
  auto count = [&] { return target.queryInt("SELECT (SELECT count(*) FROM results) * 1000 + (SELECT count(*) FROM runs) * 100 + (SELECT count(*) FROM gpus) * 10 + (SELECT count(*) FROM baselines)"); };
  auto before = count();
  EXPECT_EQ(before, 2111);
  auto s = importText(text);
  EXPECT_EQ(s.resultsWritten, 0u);
  EXPECT_EQ(s.resultsUnchanged, 2u);
  EXPECT_EQ(s.gpusAdded + s.runsAdded + s.baselinesWritten, 0u);
  EXPECT_EQ(count(), before);
}

TEST_F(dbExchange, OlderFileNeverOverwritesANewerMeasurement) {
  std::string old = exported(source);
  {
    SqliteStore store(target);
    auto run = store.beginRun(test::testRun());
    auto newer = test::okResult("blocktile1d_bm64_bn64_bk8_tm8", 4096, 4096, 4096, 18500);
    newer.measuredAt = "2025-09-01T00:00:00.000000Z";
    store.recordResult(run, newer);
  }
  auto s = importText(old);
  EXPECT_EQ(s.resultsWritten, 1u);    // the compile_error row is new here
  EXPECT_EQ(s.resultsUnchanged, 1u);  // the ok row is older than ours
  ResultFilter ok;
  ok.status = "ok";
  auto rows = SqliteStore(target).results(ok);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_DOUBLE_EQ(*rows[0].gflops, 18500);
  // And the other way round: the newer file replaces the older row.
  std::string newerText = exported(target);
  Database third(dir / "c.db", {OpenMode::ReadWrite, OpenCheck::Quick});
  SqliteStore thirdStore(third);
  importExchange(thirdStore, parseExchange(old, "old.json"));
  importExchange(thirdStore, parseExchange(newerText, "new.json"));
  EXPECT_DOUBLE_EQ(*SqliteStore(third).results(ok).at(0).gflops, 18500);
}

TEST_F(dbExchange, MalformedFilesAreRefusedAndTheDatabaseIsUntouched) {
  json good = json::parse(exported(source));
  auto mutate = [&](const std::function<void(json&)>& f) {
    json d = good;
    f(d);
    return d.dump();
  };
  std::vector<std::pair<std::string, std::string>> cases = {
      {"", "not valid JSON"},
      {"{\"format\": \"gemmtune-results\", ", "not valid JSON"},
      {"[1, 2, 3]", "not a gemmtune export"},
      {mutate([](json& d) { d["format"] = "something-else"; }), "not a gemmtune export"},
      {mutate([](json& d) { d["version"] = 7; }), "format version 7 is newer"},
      {mutate([](json& d) { d.erase("results"); }), "'results' must be an array"},
      {mutate([](json& d) { d["results"][1]["m"] = "4096"; }), "results[1].m: expected an integer"},
      {mutate([](json& d) { d["results"][0]["m"] = -5; }), "results[0].m: -5 is out of range"},
      {mutate([](json& d) { d["results"][0]["gflops"] = 1e9; }), "results[0].cache_key"},
      {mutate([](json& d) { d["results"][0]["instance"] = "smem_bs64"; }), "results[0].cache_key: does not match"},
      {mutate([](json& d) { d["results"][0]["run"] = "nope"; }), "results[0].run: names no run"},
      {mutate([](json& d) { d["results"][0]["cubin_base64"] = "%%%"; }), "is not base64"},
      {mutate([](json& d) { d["results"][0]["median_ms"] = -1.0; }), "results[0].median_ms"},
      {mutate([](json& d) { d["results"][0]["measured_at"] = "today"; }), "results[0].measured_at"},
      {mutate([](json& d) { d["gpus"][0]["sm_count"] = 200; }), "gpus[0].fingerprint: does not match"},
      {mutate([](json& d) { d["runs"][0].erase("host"); }), "runs[0].host: missing"},
      {mutate([](json& d) { d["baselines"][0]["median_ms"] = 0; }), "baselines[0].median_ms"},
      {mutate([](json& d) { d["results"][0].erase("batch"); }), "results[0].batch: missing"},
      {mutate([](json& d) { d["results"][0]["batch"] = 0; }), "results[0].batch: 0 is out of range"},
      {mutate([](json& d) { d["results"][1]["layout"] = "xy"; }),
       "results[1].layout: 'xy' is not one of nn, nt, tn, tt"},
      {mutate([](json& d) { d["baselines"][0].erase("batch"); }), "baselines[0].batch: missing"},
      {mutate([](json& d) { d["baselines"][0]["layout"] = "NN"; }), "baselines[0].layout: 'NN' is not one of"},
      {mutate([](json& d) { d["baselines"][0]["beta_class"] = ""; }), "baselines[0].beta_class: must not be empty"},
  };
  // gflops is not in the cache key: changing it alone is accepted (a re-measurement); change a
  // key part instead to exercise the cache_key check.
  cases[8] = {mutate([](json& d) { d["results"][0]["nvrtc_version"] = "99.9"; }), "results[0].cache_key"};
  importText(good.dump());
  auto before = target.queryInt("SELECT total_changes()");
  std::string bytesBefore = exported(target);
  for (const auto& [text, needle] : cases) {
    try {
      importText(text);
      ADD_FAILURE() << "accepted, expected: " << needle;
    } catch (const DataError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_EQ(exitCodeOf(e), kExitDataError);
    }
  }
  EXPECT_EQ(target.queryInt("SELECT total_changes()"), before);
  json after = json::parse(exported(target)), was = json::parse(bytesBefore);
  after.erase("exported_at");
  was.erase("exported_at");
  EXPECT_EQ(after, was);
}

// Version 2 carries each problem's batch; a batched, transposed row and baseline go through.
TEST_F(dbExchange, LayoutAndBatchTravelWithEveryRowAndBaseline) {
  {
    SqliteStore store(source);
    auto run = store.beginRun(test::testRun());
    auto batched = test::okResult("smem_bs32", 512, 512, 512, 9000);
    batched.key.problem.layout = "tn";
    batched.key.problem.batch = 64;
    ASSERT_TRUE(store.recordResult(run, batched));
    auto b = test::cublasBaseline(512, 3.0, "12.9");
    b.problem.layout = "tn";
    b.problem.batch = 64;
    ASSERT_TRUE(store.recordBaseline(run, b));
  }
  json doc = json::parse(exported(source));
  ASSERT_EQ(doc["results"].size(), 3u);
  EXPECT_EQ(doc["results"][0]["layout"], "tn");  // 512³ comes first
  EXPECT_EQ(doc["results"][0]["batch"], 64);
  EXPECT_EQ(doc["baselines"][1]["batch"], 64);
  auto s = importText(doc.dump());
  EXPECT_EQ(s.resultsWritten, 3u);
  EXPECT_EQ(s.baselinesWritten, 2u);
  ResultFilter batched;
  batched.batch = 64;
  auto rows = SqliteStore(target).results(batched);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].key.problem, (ProblemKey{512, 512, 512, "tn", "any", 64}));
  EXPECT_EQ(rows[0].cacheKeyHash, SqliteStore(source).results(batched).at(0).cacheKeyHash);
  EXPECT_EQ(SqliteStore(target).baselines().at(1).problem, (ProblemKey{512, 512, 512, "tn", "any", 64}));
}

// A file of the previous format (version 1: no batch anywhere) still imports, every problem a
// single product under the cache key it was exported with.
TEST_F(dbExchange, AVersionOneFileImportsAsBatchOne) {
  json doc = json::parse(exported(source));
  doc["version"] = 1;
  for (auto& r : doc["results"]) r.erase("batch");
  for (auto& b : doc["baselines"]) b.erase("batch");
  auto s = importText(doc.dump());
  EXPECT_EQ(s.resultsWritten, 2u);
  EXPECT_EQ(s.baselinesWritten, 1u);
  for (const auto& r : expectTargetHasTheSourceResults(2)) EXPECT_EQ(r.key.problem.batch, 1);
  EXPECT_EQ(SqliteStore(target).baselines().at(0).problem.batch, 1);
  // Re-exported, it is the current version's file of the same rows.
  EXPECT_EQ(exportedRows(target), exportedRows(source));
}
