// The tuning engine on a real GPU (label gpu; skipped without a driver): faulting candidates
// inside a tuning run, a resumed run that prunes what an earlier one measured, and the `tune`
// command killed with SIGKILL at random points or stopped with SIGINT, then resumed.
// Run: ctest -L gpu -R engine_gpu_test --output-on-failure   (alone: the tests time kernels)
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <thread>

#include "Compiler.hpp"
#include "CudaDriver.hpp"
#include "Database.hpp"
#include "FamilyRegistry.hpp"
#include "GpuDetect.hpp"
#include "TuningEngine.hpp"
#include "db_test_support.hpp"
#include "engine_cli_process.hpp"
#include "engine_db_checks.hpp"
#include "fault_family.hpp"

using namespace gemmtune;
using namespace gemmtune::test;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// A dozen legal blocktile1d configurations, the classic one among them: enough to rank and
// carry, cheap enough to tune twice per test.
Family fewBlocktile1d() {
  Family f = FamilyRegistry::builtin().get("blocktile1d");
  f.params[0].domain = {32, 64, 128};  // BM
  f.params[1].domain = {32, 64, 128};  // BN
  f.params[2].domain = {8};            // BK
  f.params[3].domain = {4, 8};         // TM
  return f;
}

const GemmShape kSmall{256, 256, 256};
const GemmShape kLarge{512, 512, 512};

// TuningEngine driven directly, with families that need not be built in (the fault family's
// template comes from a templates directory holding it next to copies of the real ones).
class EngineGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!CudaDriver::available()) GTEST_SKIP() << "no CUDA driver/GPU";
    gpu_ = resolveGpu("auto");
    templates_ = dir_ / "templates";
    fs::create_directories(templates_);
    for (const auto& entry : fs::directory_iterator(GEMMTUNE_SOURCE_DIR "/templates"))
      if (entry.path().extension() == ".cu" || entry.path().extension() == ".cuh")  // templates and their headers
        fs::copy_file(entry.path(), templates_ / entry.path().filename());
    fs::copy_file(kFaultTemplate, templates_ / faultFamily().templateFile);
  }

  GpuOutcome tune(const fs::path& dbPath, std::vector<const Family*> families, std::vector<GemmShape> sizes,
                  int carry = 24) {
    Compiler compiler(CompilerOptions{templates_, dir_ / "cache", 0});
    auto store = db::openStore(dbPath.string(), {db::OpenMode::ReadWrite});
    TuneOptions options;
    options.sizes = std::move(sizes);
    options.families = std::move(families);
    options.carry = carry;
    options.selfExe = GEMMTUNE_CLI;
    options.commandLine = "engine_gpu_test";
    options.basis = false;  // the requested sizes alone
    ProgressLine progress(false);
    std::atomic<bool> stop{false};
    TuningEngine engine(gpu_, compiler, *store, options, progress, stop);
    return engine.run();
  }

  ScratchDir dir_;
  GpuSpec gpu_;
  fs::path templates_;
};

const db::StoredResult* findRow(const std::vector<db::StoredResult>& rows, const std::string& instance,
                                const GemmShape& s) {
  for (const auto& r : rows)
    if (r.instance() == instance && r.key.problem.m == s.M && r.key.problem.n == s.N && r.key.problem.k == s.K)
      return &r;
  return nullptr;
}

// Ok rows at `s`, those stopped early included.
size_t okRows(const std::vector<db::StoredResult>& rows, const GemmShape& s) {
  size_t n = 0;
  for (const auto& r : rows)
    n += r.status == "ok" && r.key.problem.m == s.M && r.key.problem.n == s.N && r.key.problem.k == s.K;
  return n;
}

}  // namespace

TEST_F(EngineGpu, FaultyCandidatesGetTheirStatusAndLeaveTheBestAlone) {
  const Family healthy = fewBlocktile1d();
  const Family faults = faultFamily();
  GpuOutcome reference = tune(dir_ / "reference.db", {&healthy}, {kSmall});
  EXPECT_EQ(reference.workerRestarts, 0);

  auto start = Clock::now();
  GpuOutcome run = tune(dir_ / "faults.db", {&faults, &healthy}, {kSmall});
  RecordProperty("fault_run_seconds", std::to_string(secondsSince(start)));
  ASSERT_EQ(run.sizes.size(), 1u);
  EXPECT_FALSE(run.interrupted);

  int restarts = 0;
  auto rows = readRows(dir_ / "faults.db");
  for (const auto& expect : faultExpectations()) {
    restarts += expect.restartsWorker;
    const std::string name = Config{&faults, {expect.mode}, false}.name();
    const db::StoredResult* row = findRow(rows, name, kSmall);
    ASSERT_NE(row, nullptr) << name << " has no row";
    EXPECT_TRUE(statusExpected(expect, row->fullStatus())) << name << ": " << row->fullStatus() << " " << row->errorText;
    if (row->status == "wrong_result") {
      EXPECT_FALSE(row->errorText.empty()) << name;
      // Max error is absent when an element was NaN; a stray write outside C may leave every value right.
      if (row->maxError && expect.outsideC.empty()) {
        EXPECT_GT(*row->maxError, 1.0) << name;
      }
      if (!expect.outsideC.empty()) {
        EXPECT_NE(row->errorText.find(expect.outsideC), std::string::npos) << name << ": " << row->errorText;
      }
    }
  }
  const db::StoredResult* healthyMode = findRow(rows, Config{&faults, {0}, false}.name(), kSmall);
  ASSERT_NE(healthyMode, nullptr);
  EXPECT_EQ(healthyMode->status, "ok") << healthyMode->errorText;
  EXPECT_GE(run.workerRestarts, restarts) << "each sticky fault and the hang cost a worker";
  EXPECT_TRUE(onePerKey(rows));

  // The healthy family measures alike with and without faulty neighbours, and a faulty mode never
  // wins. The fault family's mode 0 is a correct kernel and may legitimately be the fastest.
  // At 256³ a kernel takes a few microseconds and the faulty run restarts its worker several times
  // (a fresh context, clocks ramping again): two configurations 6.5 % apart swapped places once on
  // the H100. A fault that disturbed the measurements would be off by far more than 10 %.
  auto referenceRows = readRows(dir_ / "reference.db");
  EXPECT_TRUE(sameBest(okMedians(referenceRows, kSmall, healthy.name), okMedians(rows, kSmall, healthy.name),
                       /*tolerance=*/0.10));
  const std::string& best = run.sizes[0].bestInstance;
  const std::string correctFaultMode = Config{&faults, {0}, false}.name();
  EXPECT_TRUE(best.rfind(healthy.name, 0) == 0 || best == correctFaultMode) << best;
}

TEST_F(EngineGpu, AResumedRunKeepsTheRowsItPrunesAndTheWinnersCubins) {
  const Family family = fewBlocktile1d();
  const fs::path dbPath = dir_ / "tune.db";
  tune(dbPath, {&family}, {kLarge}, /*carry=*/0);  // every candidate measured at the large size
  auto before = readRows(dbPath);
  ASSERT_GT(okRows(before, kLarge), 3u);

  // Now the large size comes second and only the best two of the small size are carried to it:
  // the rest would be pruned:rank, but they were measured already.
  GpuOutcome second = tune(dbPath, {&family}, {kSmall, kLarge}, /*carry=*/2);
  ASSERT_EQ(second.sizes.size(), 2u);
  auto after = readRows(dbPath);
  EXPECT_TRUE(finalRowsKept(before, after));
  EXPECT_TRUE(onePerKey(after));
  EXPECT_EQ(second.sizes[1].timed, 0);
  EXPECT_EQ(okRows(after, kLarge), okRows(before, kLarge));
  // Finalists re-timed from resumed rows (read without cubins) are stored again with one.
  for (const auto& r : after) {
    if (r.status != "ok" || r.family == "cublas") continue;  // cuBLAS's row has no binary of ours
    EXPECT_FALSE(r.cubin.empty()) << r.instance() << " lost its cubin";
  }
}

// ---- the `tune` command, killed and resumed --------------------------------------------------

namespace {

class TuneCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!CudaDriver::available()) GTEST_SKIP() << "no CUDA driver/GPU";
  }

  std::vector<std::string> args(const fs::path& dbPath, bool json = false) const {
    std::vector<std::string> a{"tune", "--sizes", "256,512", "--families", "blocktile1d", "--carry", "8",
                               "--no-basis", "--db", dbPath.string()};
    if (json) a.push_back("--json");
    return a;
  }
  // A compile cache of the test's own: the first run compiles, later ones hit it.
  std::vector<std::string> env() const { return {"XDG_CACHE_HOME=" + (dir_ / "cache").string()}; }

  // Runs to the end; returns its exit code.
  int runToEnd(const fs::path& dbPath, std::string* out = nullptr, bool json = false) {
    CliProcess p(args(dbPath, json), env(), dir_.path());
    auto rc = p.wait(300s);
    EXPECT_TRUE(rc) << "tune did not finish in 300 s";
    if (out) *out = p.out();
    if (rc && *rc != 0) ADD_FAILURE() << "tune exited " << *rc << ":\n" << p.err();
    return rc.value_or(-1);
  }

  ScratchDir dir_;
};

int resumedIn(const std::string& jsonText) {
  // Parsed into a named object: a range-for over a member of a temporary would dangle.
  const nlohmann::json doc = nlohmann::json::parse(jsonText);
  int n = 0;
  for (const auto& s : doc.at("gpus").at(0).at("sizes")) n += s.at("resumed").get<int>();
  return n;
}

// Each run's winner at `size` as every run stored it: whether the resumed run timed the others'
// winners, pruned them (and why) or measured them slower, and at what clock.
std::string winnersStory(const std::vector<db::StoredResult>& reference, const std::vector<db::StoredResult>& warm,
                         const std::vector<db::StoredResult>& resumed, const GemmShape& size) {
  std::set<std::string> winners;
  for (const auto* rows : {&reference, &warm, &resumed}) {
    if (const std::string* w = winner(okMedians(*rows, size))) winners.insert(*w);
  }
  std::string out;
  for (const auto& w : winners)
    out += w + ": reference " + rowStory(reference, size, w) + "; warm " + rowStory(warm, size, w) + "; resumed " +
           rowStory(resumed, size, w) + "\n";
  return out;
}

}  // namespace

// Kill points are uniform over the first 70 % of an uninterrupted run's wall time (the seed is
// printed). Best rule: the same instance per size as one of two uninterrupted runs, or — when two
// candidates are within timing noise — each run that measured the other's winner found it
// within 3 % of its own (engine_db_checks.hpp: sameBest).
TEST_F(TuneCli, SigkillAtRandomPointsThenResumeLosesNothingAndFindsTheSameBest) {
  const fs::path reference = dir_ / "reference.db", killed = dir_ / "killed.db";
  auto start = Clock::now();
  ASSERT_EQ(runToEnd(reference), 0);
  // The reference also filled the compile cache: time a second, cache-warm run to place the kills
  // inside what the killed runs will really take.
  start = Clock::now();
  ASSERT_EQ(runToEnd(dir_ / "warm.db"), 0);
  const double fullSeconds = secondsSince(start);

  const unsigned seed = std::random_device{}();
  RecordProperty("seed", std::to_string(seed));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> killAfter(0.2, std::max(0.5, 0.7 * fullSeconds));
  std::vector<db::StoredResult> previous;
  int killedMidRun = 0;
  for (int loop = 0; loop < 10; ++loop) {
    const double delay = killAfter(rng);
    SCOPED_TRACE(testing::Message() << "loop " << loop << ", SIGKILL after " << delay << " s, seed " << seed);
    {
      CliProcess tuner(args(killed), env(), dir_.path());
      std::this_thread::sleep_for(std::chrono::duration<double>(delay));
      killedMidRun += tuner.running();
      tuner.signal(SIGKILL);
      auto rc = tuner.wait(30s);
      ASSERT_TRUE(rc);
      EXPECT_TRUE(*rc == 128 + SIGKILL || *rc == 0) << "exit " << *rc << ":\n" << tuner.err();
    }
    EXPECT_TRUE(noWorkersWithin(5s)) << "a worker outlived its killed tuner";
    checkWhatAKillLeft(killed, previous);
  }
  RecordProperty("killed_mid_run", std::to_string(killedMidRun));
  EXPECT_GT(killedMidRun, 0) << "every run finished before its kill: nothing was tested";

  std::string out;
  ASSERT_EQ(runToEnd(killed, &out, /*json=*/true), 0);
  EXPECT_EQ(integrity(killed), "ok");
  auto finalRows = readRows(killed);
  EXPECT_TRUE(onePerKey(finalRows));
  EXPECT_TRUE(finalRowsKept(previous, finalRows));
  if (!previous.empty()) {
    EXPECT_GT(resumedIn(out), 0) << out;
  }

  // Two uninterrupted runs stand as references: with rank carrying, noise at 256 alone can change
  // the set timed at 512, so the resumed run must agree with at least one of them.
  auto referenceRows = readRows(reference), warmRows = readRows(dir_ / "warm.db");
  for (const GemmShape& s : {kSmall, kLarge}) {
    auto first = sameBest(okMedians(referenceRows, s), okMedians(finalRows, s));
    auto second = sameBest(okMedians(warmRows, s), okMedians(finalRows, s));
    EXPECT_TRUE(first || second) << "at " << s.str() << ": against the first uninterrupted run: " << first.message()
                                 << "; against the second: " << second.message()
                                 << "; the two uninterrupted runs: "
                                 << sameBest(okMedians(referenceRows, s), okMedians(warmRows, s)).message()
                                 << "\n" << winnersStory(referenceRows, warmRows, finalRows, s);
  }
}

TEST_F(TuneCli, SigintExits130WithEverythingMeasuredAndTheRerunResumes) {
  const fs::path dbPath = dir_ / "tune.db";
  CliProcess tuner(args(dbPath), env(), dir_.path());
  // Interrupt once some candidates are measured (ok rows committed), cold compile cache and all.
  std::vector<db::StoredResult> seen;
  auto waitStart = Clock::now();
  while (okRows(seen, kSmall) < 5) {
    ASSERT_TRUE(tuner.running()) << "tune ended before it could be interrupted:\n" << tuner.err();
    ASSERT_LT(secondsSince(waitStart), 180) << "no ok rows after 180 s";
    std::this_thread::sleep_for(200ms);
    try {
      seen = readRows(dbPath);
    } catch (const std::exception&) {
      // Not created, or its schema not committed yet.
    }
  }
  seen = readRows(dbPath);

  auto signalled = Clock::now();
  tuner.signal(SIGINT);
  auto rc = tuner.wait(30s);
  const double exitSeconds = secondsSince(signalled);
  RecordProperty("sigint_exit_seconds", std::to_string(exitSeconds));
  ASSERT_TRUE(rc) << "no exit within 30 s of SIGINT";
  EXPECT_EQ(*rc, 130) << tuner.err();
  EXPECT_LT(exitSeconds, 5.0);
  EXPECT_NE(tuner.err().find("interrupted"), std::string::npos) << tuner.err();
  EXPECT_TRUE(noWorkersWithin(5s));

  EXPECT_EQ(integrity(dbPath), "ok");
  auto afterSignal = readRows(dbPath);
  EXPECT_TRUE(finalRowsKept(seen, afterSignal));
  EXPECT_TRUE(onePerKey(afterSignal));

  std::string out;
  ASSERT_EQ(runToEnd(dbPath, &out, /*json=*/true), 0);
  EXPECT_GE(resumedIn(out), static_cast<int>(okRows(afterSignal, kSmall))) << out;
  auto finalRows = readRows(dbPath);
  EXPECT_TRUE(finalRowsKept(afterSignal, finalRows));
  EXPECT_TRUE(onePerKey(finalRows));
}
