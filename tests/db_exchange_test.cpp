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
};

}  // namespace

using dbExchange = ExchangeFixture;

TEST_F(dbExchange, ExportThenImportReproducesEveryRow) {
  std::string text = exported(source);
  json doc = json::parse(text);
  EXPECT_EQ(doc["format"], "gemmtune-results");
  EXPECT_EQ(doc["version"], 1);
  EXPECT_EQ(doc["results"].size(), 2u);
  EXPECT_EQ(doc["gpus"][0]["sm_count"], 132);

  auto s = importText(text);
  EXPECT_EQ(s.resultsWritten, 2u);
  EXPECT_EQ(s.gpusAdded, 1u);
  EXPECT_EQ(s.runsAdded, 1u);
  EXPECT_EQ(s.baselinesWritten, 1u);
  ResultFilter all;
  all.withCubin = true;
  auto a = SqliteStore(source).results(all), b = SqliteStore(target).results(all);
  ASSERT_EQ(b.size(), 2u);
  for (size_t i = 0; i < a.size(); ++i) test::expectSameMeasurement(b[i], a[i]);
  // Same data, so the second export equals the first apart from its own time stamp.
  json again = json::parse(exported(target));
  again.erase("exported_at");
  doc.erase("exported_at");
  EXPECT_EQ(again, doc);
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
