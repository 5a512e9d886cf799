// `tune` SIGKILLed at random points on the simulated GPU (tests/fake_worker `table`), then run to
// the end. Simulated times are exact, so whatever a resumed run decides differently from one
// uninterrupted run is the engine's doing, not timing noise: the same rows, statuses and times.
// The kill points are timings (the worker kills its tuner at the N-th one), not wall-clock delays,
// so a loaded machine moves none of them. engine_gpu_test's TuneCli test does the same on a GPU,
// with time-based kills and the noise that comes with it; EngineSim's crash test covers a kill
// between two writes.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <fstream>
#include <map>
#include <random>

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
  // The run's exit code; it must end within 10 minutes.
  int run(const fs::path& dbPath) {
    CliProcess p(args(dbPath), env(), dir_.path());
    auto rc = p.wait(std::chrono::minutes(10));
    EXPECT_TRUE(rc) << "tune did not end in 10 minutes";
    if (rc && *rc != 0 && *rc != 128 + SIGKILL) ADD_FAILURE() << "tune exited " << *rc << ":\n" << p.err();
    return rc.value_or(-1);
  }
  // Timings the simulated GPU has answered so far, over every run of this test.
  int timings() const {
    int n = 0;
    std::ifstream log(dir_.path() / "log");
    for (std::string line; std::getline(log, line);) n += line.rfind("run ", 0) == 0;
    return n;
  }
  // "instance" -> "status, median" of every kernel row at `m` (cuBLAS's rows aside).
  static std::map<std::string, std::string> rowsAt(const std::vector<db::StoredResult>& rows, long long m) {
    std::map<std::string, std::string> out;
    for (const auto& r : rows)
      if (r.key.problem.m == m && r.family != "cublas")
        out[r.instance()] = r.fullStatus() + (r.medianMs ? fmt::format(", {:.17g}", *r.medianMs) : "");
    return out;
  }

  ScratchDir dir_;
};

}  // namespace

TEST_F(EngineSimResume, SigkillAtRandomTimingsThenResumeFindsWhatOneRunFinds) {
  const fs::path reference = dir_.path() / "reference.db", killed = dir_.path() / "killed.db";
  const int before = timings();
  ASSERT_EQ(run(reference), 0);
  const int perRun = timings() - before;
  ASSERT_GT(perRun, 10);

  const unsigned seed = std::random_device{}();
  std::mt19937 rng(seed);
  std::vector<db::StoredResult> previous;
  int killedMidRun = 0;
  // Each kill lands within what is left to time: about a full run's timings less those the
  // killed runs stored (the one in flight and the re-timing rounds are done again).
  for (int loop = 0, left = perRun; loop < 12 && left > 1; ++loop) {
    const int at = std::uniform_int_distribution<int>(1, left)(rng);
    SCOPED_TRACE(testing::Message() << "loop " << loop << ", killed at its timing " << at << ", seed " << seed);
    std::ofstream(dir_.path() / "kill-tuner-at") << timings() + at << "\n";
    const bool killedThisRun = run(killed) == 128 + SIGKILL;
    killedMidRun += killedThisRun;
    left = killedThisRun ? left - at + 1 : 0;
    checkWhatAKillLeft(killed, previous);
  }
  RecordProperty("killed_mid_run", std::to_string(killedMidRun));
  EXPECT_GT(killedMidRun, 0) << "every run finished before its kill: nothing was tested";
  fs::remove(dir_.path() / "kill-tuner-at");
  ASSERT_EQ(run(killed), 0);

  const auto referenceRows = readRows(reference), finalRows = readRows(killed);
  EXPECT_TRUE(finalRowsKept(previous, finalRows));
  for (long long m : {256, 512}) EXPECT_EQ(rowsAt(finalRows, m), rowsAt(referenceRows, m)) << "at " << m << ", seed " << seed;
}
