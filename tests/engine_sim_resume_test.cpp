// `tune` SIGKILLed at random points on the simulated GPU (tests/fake_worker `table`), then run to
// the end. Simulated times are exact, so whatever a resumed run decides differently from one
// uninterrupted run is the engine's doing, not timing noise: the same winner at every size, the same
// rows measured. engine_gpu_test's TuneCli test does the same on a GPU, where noise blurs it.
#include <gtest/gtest.h>

#include <chrono>
#include <algorithm>
#include <random>
#include <set>

#include "db_test_support.hpp"
#include "engine_cli_process.hpp"
#include "engine_db_checks.hpp"

using namespace gemmtune;
using namespace gemmtune::test;
namespace fs = std::filesystem;

namespace {

class EngineSimResume : public ::testing::Test {
 protected:
  std::vector<std::string> args(const fs::path& dbPath) const {
    return {"tune", "--sizes", "256,512", "--families", "blocktile1d", "--carry", "8", "--no-basis", "--db",
            dbPath.string()};
  }
  std::vector<std::string> env() const {
    return {"GEMMTUNE_SIMULATED_GPU=h100",
            "GEMMTUNE_SIMULATED_WORKER=" + std::string(GEMMTUNE_FAKE_WORKER) + " table " + dir_.path().string(),
            "XDG_CACHE_HOME=" + (dir_.path() / "cache").string()};
  }
  void runToEnd(const fs::path& dbPath) {
    CliProcess p(args(dbPath), env(), dir_.path());
    auto rc = p.wait(std::chrono::minutes(10));
    ASSERT_TRUE(rc) << "tune did not finish in 10 minutes";
    ASSERT_EQ(*rc, 0) << p.err();
  }
  // "instance status" of every kernel row at `m` (cuBLAS's rows aside).
  static std::set<std::string> rowsAt(const std::vector<db::StoredResult>& rows, long long m) {
    std::set<std::string> out;
    for (const auto& r : rows)
      if (r.key.problem.m == m && r.family != "cublas") out.insert(r.instance() + " " + r.status);
    return out;
  }

  ScratchDir dir_;
};

std::string winnerOf(const Medians& m) {
  auto best = std::min_element(m.begin(), m.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  return best == m.end() ? "none" : best->first;
}

}  // namespace

TEST_F(EngineSimResume, SigkillAtRandomPointsThenResumeFindsWhatOneRunFinds) {
  const fs::path reference = dir_.path() / "reference.db", killed = dir_.path() / "killed.db";
  ASSERT_NO_FATAL_FAILURE(runToEnd(dir_.path() / "cold.db"));  // fills the compile cache
  const auto start = std::chrono::steady_clock::now();
  ASSERT_NO_FATAL_FAILURE(runToEnd(reference));
  const double fullSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const unsigned seed = std::random_device{}();
  const int killedMidRun =
      killAtRandomPoints(args(killed), env(), dir_.path(), {12, 0.05, std::max(0.2, 0.9 * fullSeconds), seed});
  RecordProperty("killed_mid_run", std::to_string(killedMidRun));
  EXPECT_GT(killedMidRun, 0) << "every run finished before its kill: nothing was tested";
  ASSERT_NO_FATAL_FAILURE(runToEnd(killed));

  const auto referenceRows = readRows(reference), finalRows = readRows(killed);
  for (const GemmShape& s : {GemmShape{256, 256, 256}, GemmShape{512, 512, 512}}) {
    SCOPED_TRACE(testing::Message() << "at " << s.str() << ", seed " << seed);
    EXPECT_EQ(winnerOf(okMedians(finalRows, s)), winnerOf(okMedians(referenceRows, s)));
    EXPECT_EQ(rowsAt(finalRows, s.M), rowsAt(referenceRows, s.M));
  }
}
