// WorkerClient against fake workers (no GPU): deadlines kill the whole process group, crashes and
// garbage become worker_died, faults become runtime_fault, every failure restarts the worker and
// runs the canary before returning, and a GPU that keeps failing the canary stops the run.
#include <gtest/gtest.h>

#include <thread>
#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "CliRunner.hpp"
#include "CudaDriver.hpp"
#include "WorkerClient.hpp"
#include "ExitCodes.hpp"

using namespace gemmtune;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// Processes of group `pgid` that are still running (zombies waiting for a reaper do not count).
int liveMembers(pid_t pgid) {
  int n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    // A process can exit between the directory listing and this read: skip it.
    std::string stat;
    try {
      std::ifstream in(e.path() / "stat");
      stat.assign(std::istreambuf_iterator<char>(in), {});
    } catch (const std::exception&) {
      continue;
    }
    auto close = stat.rfind(')');
    if (close == std::string::npos || close + 2 > stat.size()) continue;  // gone, or a short read
    std::istringstream rest(stat.substr(close + 2));
    char state = 0;
    long ppid = 0, pgrp = 0;
    rest >> state >> ppid >> pgrp;
    if (pgrp == pgid && state != 'Z' && state != 'X') ++n;
  }
  return n;
}

// SIGKILL is delivered asynchronously: on a loaded machine a killed group member can take a
// moment to become a zombie. Members still alive after two seconds are real survivors.
int liveMembersAfterGrace(pid_t pgid) {
  int n = liveMembers(pgid);
  for (int i = 0; i < 40 && n > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    n = liveMembers(pgid);
  }
  return n;
}

class FakeWorker : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gemmtune-fake-worker-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<std::string> argv(const std::string& mode) const { return {GEMMTUNE_FAKE_WORKER, mode, dir_.string()}; }
  static WorkerOptions fast() {
    WorkerOptions o;
    o.startDeadlineSec = 2;
    o.canaryDeadlineSec = 2;
    o.retryPause = std::chrono::milliseconds(10);
    o.exitGrace = std::chrono::milliseconds(500);
    return o;
  }
  std::vector<std::string> log() const {
    std::vector<std::string> lines;
    std::ifstream in(dir_ / "log");
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    return lines;
  }
  static CandidateRequest request() {
    CandidateRequest r;
    r.instance = "fake_candidate";
    r.cubin = "not really a cubin";
    return r;
  }

  fs::path dir_;
};

}  // namespace

TEST_F(FakeWorker, HealthyWorkerAnswersAndShutsDown) {
  pid_t pid;
  {
    WorkerClient c(argv("healthy"), fast());
    EXPECT_EQ(c.info().name, "Fake GPU");
    c.setProblem({64, 64, 64});
    auto r = c.run(request(), 5);
    EXPECT_EQ(r.status, "ok");
    EXPECT_EQ(c.cublas({}, 5).status, "ok");
    EXPECT_EQ(c.restarts(), 0);
    pid = c.pid();
  }
  EXPECT_EQ(liveMembersAfterGrace(pid), 0);
  EXPECT_EQ(log(), (std::vector<std::string>{"start", "canary", "problem", "run", "cublas", "shutdown"}));
}

TEST_F(FakeWorker, DeadlineKillsTheWholeGroupAndRestarts) {
  WorkerClient c(argv("hang-on-run"), fast());
  c.setProblem({64, 64, 64});
  const pid_t first = c.pid();
  auto start = Clock::now();
  auto r = c.run(request(), 1.0);
  double took = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_EQ(r.status, "timeout");
  EXPECT_GE(took, 1.0);
  EXPECT_LT(took, 5.0);
  EXPECT_EQ(liveMembersAfterGrace(first), 0) << "the worker or its child survived the deadline";
  EXPECT_NE(c.pid(), first);
  EXPECT_EQ(c.restarts(), 1);
  // The replacement ran the canary and got the problem back before the result was returned.
  auto l = log();
  ASSERT_GE(l.size(), 7u);
  EXPECT_EQ((std::vector<std::string>(l.end() - 3, l.end())), (std::vector<std::string>{"start", "canary", "problem"}));
}

TEST_F(FakeWorker, CrashIsWorkerDied) {
  WorkerClient c(argv("crash-on-run"), fast());
  c.setProblem({64, 64, 64});
  auto r = c.run(request(), 5);
  EXPECT_EQ(r.status, "worker_died");
  EXPECT_NE(r.detail.find("signal 6"), std::string::npos) << r.detail;
  EXPECT_EQ(c.restarts(), 1);
}

TEST_F(FakeWorker, GarbageIsWorkerDied) {
  for (const char* mode : {"garbage-on-run", "noncbor-on-run"}) {
    WorkerClient c(argv(mode), fast());
    const pid_t first = c.pid();
    auto r = c.run(request(), 5);
    EXPECT_EQ(r.status, "worker_died") << mode;
    EXPECT_EQ(c.restarts(), 1) << mode;
    EXPECT_EQ(liveMembersAfterGrace(first), 0) << mode;
  }
}

TEST_F(FakeWorker, StickyFaultIsRuntimeFaultWithItsCode) {
  WorkerClient c(argv("fault-on-run"), fast());
  auto r = c.run(request(), 5);
  EXPECT_EQ(r.status, "runtime_fault:CUDA_ERROR_ILLEGAL_ADDRESS");
  EXPECT_NE(r.detail.find("exited with code 3"), std::string::npos) << r.detail;
  EXPECT_EQ(c.restarts(), 1);
}

TEST_F(FakeWorker, RefusedRequestThrowsWithItsExitCode) {
  WorkerClient c(argv("refuse-run"), fast());
  try {
    c.run(request(), 5);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_EQ(exitCodeOf(e), kExitUsage);
    EXPECT_NE(std::string(e.what()).find("no problem set"), std::string::npos);
  }
  EXPECT_EQ(c.restarts(), 0);
}

TEST_F(FakeWorker, CanaryFailingEveryTimeIsGpuUnhealthy) {
  try {
    WorkerClient c(argv("bad-canary"), fast());
    FAIL() << "expected GpuUnhealthyError";
  } catch (const GpuUnhealthyError& e) {
    EXPECT_EQ(exitCodeOf(e), kExitGpuUnhealthy);
  }
  auto l = log();
  EXPECT_EQ(std::count(l.begin(), l.end(), "start"), 3);
}

TEST_F(FakeWorker, SickAfterAFaultStopsTheRun) {
  WorkerClient c(argv("crash-then-sick"), fast());
  EXPECT_THROW(c.run(request(), 5), GpuUnhealthyError);
}

TEST_F(FakeWorker, HangingStartIsRetriedThenUnhealthyWithoutOrphans) {
  auto o = fast();
  o.startDeadlineSec = 0.5;
  auto start = Clock::now();
  EXPECT_THROW(WorkerClient(argv("hang-hello"), o), GpuUnhealthyError);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 5.0);
  auto l = log();
  EXPECT_EQ(std::count(l.begin(), l.end(), "start"), 3);
  // Every fake and the child it started are gone.
  std::ifstream pids(dir_ / "pids");
  int n = 0;
  for (pid_t pid; pids >> pid; ++n) EXPECT_EQ(liveMembersAfterGrace(pid), 0) << "group " << pid;
  EXPECT_EQ(n, 3);
}

TEST_F(FakeWorker, DefiniteStartErrorIsNotRetried) {
  try {
    WorkerClient c(argv("no-gpu"), fast());
    FAIL() << "expected an Error";
  } catch (const GpuUnhealthyError&) {
    FAIL() << "a missing driver is not an unhealthy GPU";
  } catch (const Error& e) {
    EXPECT_EQ(exitCodeOf(e), kExitUnavailable);
  }
  EXPECT_EQ(log(), std::vector<std::string>{"start"});
}

TEST_F(FakeWorker, WorkerGoneBeforeALargeWriteIsNoSigpipe) {
  WorkerClient c(argv("exit-after-canary"), fast());
  CandidateRequest r = request();
  r.cubin.assign(4 << 20, 'x');  // far beyond the pipe buffer
  auto res = c.run(r, 5);  // the test process would die of SIGPIPE if it were not held back
  EXPECT_EQ(res.status, "worker_died");
}

TEST_F(FakeWorker, InterruptAbandonsTheRequestWithoutRestart) {
  WorkerClient c(argv("hang-on-run"), fast());
  const pid_t first = c.pid();
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    c.interrupt();
  });
  auto r = c.run(request(), 30);
  stopper.join();
  EXPECT_EQ(r.status, "interrupted");
  EXPECT_EQ(c.restarts(), 0);
  EXPECT_EQ(liveMembersAfterGrace(first), 0);
  EXPECT_EQ(c.run(request(), 1).status, "interrupted");
}

TEST_F(FakeWorker, MissingExecutableIsUnavailable) {
  EXPECT_THROW(WorkerClient({"/nonexistent/gemmtune", "worker"}, fast()), UnavailableError);
}

TEST(RealWorker, WithoutAGpuTheWorkerSaysSoAtOnce) {
  if (CudaDriver::available()) GTEST_SKIP() << "a CUDA driver is present";
  try {
    WorkerClient c(0, GEMMTUNE_CLI);
    FAIL() << "expected NoGpuError";
  } catch (const Error& e) {
    EXPECT_EQ(exitCodeOf(e), kExitUnavailable);
    EXPECT_NE(std::string(e.what()).find("no CUDA driver"), std::string::npos) << e.what();
  }
}

TEST(RealWorker, HiddenFromHelp) {
  auto r = gemmtune::test::runCli({"--help"});
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_EQ(r.out.find("worker"), std::string::npos) << r.out;
}
