// Several processes on one database: two writers at once lose nothing and never see "database
// is locked"; a writer SIGKILLed mid-run (20 times) leaves a database that passes
// integrity_check and holds every result it reported as committed.
// Run: ctest -R dbConcurrency
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <set>
#include <thread>

#include "Database.hpp"
#include "SqliteStore.hpp"
#include "db_test_support.hpp"

using namespace gemmtune;
using namespace gemmtune::db;
using gemmtune::test::ScratchDir;

namespace {

OpenOptions writable() { return {OpenMode::ReadWrite, OpenCheck::Header}; }

// Writes results with M = base + i; after each commit reports i on `reportFd` (if >= 0).
// Exit status 0 after `count` results, 1 on any exception.
[[noreturn]] void writerProcess(const std::filesystem::path& path, long long base, int count, int reportFd) {
  int status = 0;
  try {
    Database db(path, writable());
    SqliteStore store(db);
    auto run = store.beginRun(test::testRun());
    auto record = test::okResult("smem_bs32_guarded", 1, 64, 64, 100);
    for (int i = 0; count < 0 || i < count; ++i) {
      record.key.problem.m = base + i;
      store.recordResult(run, record);
      if (reportFd >= 0 && ::write(reportFd, &i, sizeof i) != sizeof i) break;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "writer %lld: %s\n", base, e.what());
    status = 1;
  }
  ::_exit(status);
}

std::set<long long> storedSizes(const std::filesystem::path& path) {
  Database db(path, writable());
  std::set<long long> out;
  auto st = db.prepare("SELECT m FROM results");
  while (st.step()) out.insert(st.getInt64(0));
  return out;
}

}  // namespace

TEST(dbConcurrency, TwoWriterProcessesLoseNoRows) {
  ScratchDir dir;
  auto path = dir / "tune.db";
  constexpr int kPerWriter = 150;
  std::vector<pid_t> writers;
  for (long long base : {1000000LL, 2000000LL}) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) writerProcess(path, base, kPerWriter, -1);
    writers.push_back(pid);
  }
  for (pid_t pid : writers) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a writer failed (see stderr)";
  }
  auto sizes = storedSizes(path);
  EXPECT_EQ(sizes.size(), 2u * kPerWriter);
  EXPECT_TRUE(sizes.contains(1000000) && sizes.contains(1000000 + kPerWriter - 1));
  EXPECT_TRUE(sizes.contains(2000000) && sizes.contains(2000000 + kPerWriter - 1));
  Database db(path, writable());
  EXPECT_EQ(db.queryInt("SELECT count(*) FROM runs"), 2);
  EXPECT_EQ(db.queryInt("SELECT count(*) FROM gpus"), 1);
}

TEST(dbConcurrency, SigkilledWriterLosesNoCommittedRow) {
  ScratchDir dir;
  auto path = dir / "tune.db";
  std::mt19937 gen(42);
  std::uniform_int_distribution<int> killAfterMs(5, 40);
  std::set<long long> committed;
  for (int round = 0; round < 20; ++round) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    long long base = (round + 1) * 1000000LL;
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(fds[0]);
      writerProcess(path, base, -1, fds[1]);
    }
    ::close(fds[1]);
    // The kill comes a random while after the writer's first commit, not after its start: on a
    // loaded machine (a 2-core CI host building in parallel) opening the database alone took
    // most of 40 ms, and 20 rounds committed 12 rows between them.
    pollfd firstCommit{fds[0], POLLIN, 0};
    const bool committedOnce = ::poll(&firstCommit, 1, 30000) == 1;
    int first = 0;
    if (!committedOnce || ::read(fds[0], &first, sizeof first) != static_cast<ssize_t>(sizeof first)) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      ::close(fds[0]);
      FAIL() << "round " << round << ": the writer committed nothing within 30 s";
    }
    committed.insert(base + first);
    std::this_thread::sleep_for(std::chrono::milliseconds(killAfterMs(gen)));
    ::kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "round " << round;
    int i = 0;
    while (::read(fds[0], &i, sizeof i) == sizeof i) committed.insert(base + i);
    ::close(fds[0]);

    Database db(path, {OpenMode::ReadWrite, OpenCheck::Quick});
    ASSERT_EQ(db.integrityCheck(), "ok") << "round " << round;
  }
  auto stored = storedSizes(path);
  EXPECT_GT(committed.size(), 20u) << "the writers were killed before most of their rows: the test says little";
  for (long long m : committed) EXPECT_TRUE(stored.contains(m)) << "committed result " << m << " lost";
}

// Two processes creating the same new database at once: both must open it. Before opening read
// the schema state in one transaction and retried busy steps, about half of such races failed
// ("database is locked", or tables seen without their application_id).
TEST(dbConcurrency, TwoProcessesCreatingOneDatabaseBothOpenIt) {
  for (int round = 0; round < 20; ++round) {
    ScratchDir dir;
    auto path = dir / "tune.db";
    std::vector<pid_t> openers;
    for (int i = 0; i < 2; ++i) {
      pid_t pid = ::fork();
      ASSERT_GE(pid, 0);
      if (pid == 0) writerProcess(path, 1000000LL * (i + 1), 1, -1);
      openers.push_back(pid);
    }
    for (pid_t pid : openers) {
      int status = 0;
      ASSERT_EQ(::waitpid(pid, &status, 0), pid);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "round " << round << ": an opener failed";
    }
    EXPECT_EQ(storedSizes(path).size(), 2u) << "round " << round;
  }
}
