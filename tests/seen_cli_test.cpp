// `gemmtune seen` and `gemmtune tune --seen` as a user runs them, on rows the library would have
// recorded (written here through the store) for the tests' simulated H100: the list most time
// first with the hint to tune them, JSON, --limit, --clear; `tune --seen` tuning exactly the
// recorded shapes of that GPU (fake_worker's table), and saying so when there are none.
// Run: ctest -R SeenCli
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "CliRunner.hpp"
#include "GpuProfiles.hpp"
#include "ResultStore.hpp"
#include "scratch_dir.hpp"

using gemmtune::test::runCli;

namespace gemmtune {
namespace {

std::vector<std::string> simulatedH100(const std::filesystem::path& dir) {
  return {"GEMMTUNE_SIMULATED_GPU=h100",
          "GEMMTUNE_SIMULATED_WORKER=" + std::string(GEMMTUNE_FAKE_WORKER) + " table " + (dir / "worker").string(),
          "XDG_CACHE_HOME=" + (dir / "cache").string()};
}

db::SeenRecord seenOf(long long m, long long n, long long k, const char* layout, long long batch, std::int64_t calls,
                      double ms) {
  return {db::ProblemKey{m, n, k, layout, "any", batch}, calls, ms};
}

class SeenCli : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = db::openStore(db_, {db::OpenMode::ReadWrite});
    const std::vector<db::SeenRecord> h100{seenOf(16, 256, 512, "tn", 1, 40, 2.0),
                                           seenOf(200, 300, 100, "nn", 4, 3, 9.0)};
    store->recordSeen(findGpuProfile("h100")->spec, h100);
    // Another GPU's shape: listed by `seen`, never tuned on the H100.
    const std::vector<db::SeenRecord> a100{seenOf(64, 64, 64, "nn", 1, 1, 0.5)};
    store->recordSeen(findGpuProfile("a100")->spec, a100);
  }
  test::ScratchDir dir_;
  std::string db_ = (dir_.path() / "tune.db").string();
};

TEST_F(SeenCli, ListsMostTimeFirstWithTheHint) {
  auto r = runCli({"seen", "--db", db_});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const auto first = r.out.find("200x300x100 batch 4"), second = r.out.find("16x256x512 tn");
  ASSERT_NE(first, std::string::npos) << r.out;
  ASSERT_NE(second, std::string::npos) << r.out;
  EXPECT_LT(first, second) << r.out;
  EXPECT_LT(second, r.out.find("A100")) << r.out;  // two GPUs: a GPU column
  EXPECT_NE(r.out.find("tune them: gemmtune tune --seen --db " + db_), std::string::npos) << r.out;
  const auto row = r.out.substr(second, r.out.find('\n', second) - second);
  for (const char* field : {" 40 ", " 2.000 ", " 0.0500 "}) EXPECT_NE(row.find(field), std::string::npos) << row;

  auto limited = runCli({"seen", "--db", db_, "--limit", "1", "--json"});
  ASSERT_EQ(limited.exitCode, 0) << limited.err;
  auto j = nlohmann::json::parse(limited.out);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["shape"], "200x300x100 batch 4");
  EXPECT_EQ(j[0]["batch"], 4);
  EXPECT_EQ(j[0]["calls"], 3);
  EXPECT_EQ(j[0]["time_ms"], 9.0);
  EXPECT_EQ(j[0]["gpu"], findGpuProfile("h100")->spec.name);
  EXPECT_TRUE(j[0]["last_seen"].is_string());
}

TEST_F(SeenCli, ClearForgetsThemAndNothingLeftIsSaid) {
  auto cleared = runCli({"seen", "--db", db_, "--clear"});
  ASSERT_EQ(cleared.exitCode, 0) << cleared.err;
  EXPECT_NE(cleared.out.find("removed 3 recorded shape(s)"), std::string::npos) << cleared.out;
  auto r = runCli({"seen", "--db", db_});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.err.find("no shapes recorded yet"), std::string::npos) << r.err;
  auto missing = runCli({"seen", "--db", (dir_.path() / "none.db").string()});
  EXPECT_EQ(missing.exitCode, 1);
  EXPECT_NE(missing.err.find("(no database)"), std::string::npos) << missing.err;
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "none.db"));
  EXPECT_EQ(runCli({"seen", "--db", db_, "--limit", "0"}).exitCode, 2);
}

TEST_F(SeenCli, TuneSeenTunesTheRecordedShapesOfThisGpu) {
  auto r = runCli({"tune", "--seen", "--families", "smem", "--params", "BLOCKSIZE=16", "--db", db_, "--json"},
                  simulatedH100(dir_.path()));
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.err.find("--seen: 2 recorded shape(s), by recorded time: 200x300x100 batch 4 (9 ms), 16x256x512 tn "
                       "(2 ms)"),
            std::string::npos)
      << r.err;
  std::set<std::string> tuned;
  const auto summary = nlohmann::json::parse(r.out);
  for (const auto& s : summary["gpus"][0]["sizes"])
    tuned.insert(fmt::format("{}x{}x{} {} {}", s["m"].get<long long>(), s["n"].get<long long>(),
                             s["k"].get<long long>(), s["layout"].get<std::string>(), s["batch"].get<long long>()));
  EXPECT_EQ(tuned, (std::set<std::string>{"200x300x100 nn 4", "16x256x512 tn 1"})) << r.out;
}

TEST_F(SeenCli, TuneSeenWithoutRecordedShapesSaysSo) {
  ASSERT_EQ(runCli({"seen", "--db", db_, "--clear"}).exitCode, 0);
  auto r = runCli({"tune", "--seen", "--families", "smem", "--db", db_}, simulatedH100(dir_.path()));
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.err.find("no shapes recorded for this GPU"), std::string::npos) << r.err;
  auto both = runCli({"tune", "--seen", "--sizes", "1024", "--db", db_}, simulatedH100(dir_.path()));
  EXPECT_EQ(both.exitCode, 2) << both.err;
}

}  // namespace
}  // namespace gemmtune
