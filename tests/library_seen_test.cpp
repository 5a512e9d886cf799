// The library's record of shapes served without an exact row (library/SeenRecorder), without a
// GPU: counters flushed per GPU as records, periodically and at destruction; a failing sink warned
// about once, its counts dropped; the store sink writing the user's database (created when
// missing, never when nothing was counted; an older schema, a damaged or read-only file: one
// warning, no exception); the switch (option and environment) and the time estimate.
// Run: ctest -R LibrarySeen
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "Planner.hpp"
#include "SeenRecorder.hpp"
#include "gemmtune/Library.hpp"
#include "library_test_support.hpp"
#include "scratch_dir.hpp"

namespace gemmtune::library {
namespace {

using namespace std::chrono_literals;

struct Flushed {
  std::string fingerprint;
  std::vector<db::SeenRecord> records;
};

// A sink that keeps what it is given (and fails while `fail` is set).
struct FakeSink {
  std::shared_ptr<std::mutex> mutex = std::make_shared<std::mutex>();
  std::shared_ptr<std::vector<Flushed>> got = std::make_shared<std::vector<Flushed>>();
  std::shared_ptr<bool> fail = std::make_shared<bool>(false);
  SeenRecorder::Sink sink() const {
    return [m = mutex, g = got, f = fail](const GpuSpec& gpu, std::span<const db::SeenRecord> records) {
      std::lock_guard lock(*m);
      if (*f) throw std::runtime_error("the store is away");
      g->push_back({db::gpuFingerprint(gpu), {records.begin(), records.end()}});
    };
  }
  std::vector<Flushed> take() const {
    std::lock_guard lock(*mutex);
    return std::exchange(*got, {});
  }
};

db::ProblemKey problem(long long m, long long n, long long k, const char* layout = "nn") {
  return db::ProblemKey{m, n, k, layout, "any", 1};
}

GpuSpec otherGpu() {
  GpuSpec g = test::h100();
  g.smCount = 114;  // another fingerprint
  return g;
}

TEST(LibrarySeen, CountsAreFlushedPerGpuAndStartAgainFromZero) {
  Warnings warnings;
  FakeSink fake;
  SeenRecorder recorder(fake.sink(), "the test sink", warnings, 1h);
  SeenCounter* skinny = recorder.counterFor(test::h100(), problem(16, 1023, 3422, "tn"), 0.5);
  SeenCounter* square = recorder.counterFor(test::h100(), problem(1000, 1000, 1000), 2.0);
  SeenCounter* elsewhere = recorder.counterFor(otherGpu(), problem(16, 1023, 3422, "tn"), 1.0);
  EXPECT_NE(skinny, elsewhere);
  EXPECT_EQ(recorder.counterFor(test::h100(), problem(16, 1023, 3422, "tn"), 99.0), skinny);  // first estimate kept
  for (int i = 0; i < 3; ++i) skinny->count();
  square->count();
  elsewhere->count(), elsewhere->count();

  recorder.flush();
  auto got = fake.take();
  ASSERT_EQ(got.size(), 2u);  // one sink call per GPU
  std::map<std::string, std::vector<db::SeenRecord>> byGpu;
  for (auto& f : got) byGpu[f.fingerprint] = f.records;
  const auto& mine = byGpu.at(db::gpuFingerprint(test::h100()));
  ASSERT_EQ(mine.size(), 2u);
  EXPECT_EQ(mine[0].problem, problem(16, 1023, 3422, "tn"));
  EXPECT_EQ(mine[0].calls, 3);
  EXPECT_DOUBLE_EQ(mine[0].timeMs, 1.5);
  EXPECT_EQ(mine[1].calls, 1);
  EXPECT_DOUBLE_EQ(mine[1].timeMs, 2.0);
  const auto& theirs = byGpu.at(db::gpuFingerprint(otherGpu()));
  ASSERT_EQ(theirs.size(), 1u);
  EXPECT_EQ(theirs[0].calls, 2);

  recorder.flush();  // nothing new: the sink is not called
  EXPECT_TRUE(fake.take().empty());
  square->count();
  recorder.flush();
  got = fake.take();
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(got[0].records.size(), 1u);
  EXPECT_EQ(got[0].records[0].calls, 1);
}

TEST(LibrarySeen, OnlyPlansWithoutAnExactRowAreCounted) {
  Warnings warnings;
  FakeSink fake;
  SeenRecorder recorder(fake.sink(), "the test sink", warnings, 1h);
  Plan exact;
  exact.choice.match = Match::exact;
  EXPECT_EQ(recorder.counterFor(test::h100(), GemmShape{4096, 4096, 4096}, exact), nullptr);
  Plan nearest;
  nearest.choice.match = Match::nearest_size;
  nearest.choice.measuredGflops = 20000;
  nearest.predictedMs = 0.25;  // the lookup's prediction wins over the measured rate
  SeenCounter* c = recorder.counterFor(test::h100(), GemmShape{100, 200, 300, Layout{true, false}, 4}, nearest);
  ASSERT_NE(c, nullptr);
  c->count();
  recorder.flush();
  auto got = fake.take();
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(got[0].records.size(), 1u);
  EXPECT_EQ(got[0].records[0].problem, (db::ProblemKey{100, 200, 300, "tn", "any", 4}));
  EXPECT_DOUBLE_EQ(got[0].records[0].timeMs, 0.25);
}

TEST(LibrarySeen, TheThreadFlushesEveryPeriodAndAtDestruction) {
  Warnings warnings;
  FakeSink fake;
  {
    SeenRecorder recorder(fake.sink(), "the test sink", warnings, 20ms);
    recorder.counterFor(test::h100(), problem(64, 64, 64), 1.0)->count();
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    std::vector<Flushed> got;
    while (got.empty() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(5ms);
      got = fake.take();
    }
    ASSERT_EQ(got.size(), 1u) << "no periodic flush within 10 s";
    EXPECT_EQ(got[0].records[0].calls, 1);
  }
  {
    SeenRecorder recorder(fake.sink(), "the test sink", warnings, 1h);
    SeenCounter* c = recorder.counterFor(test::h100(), problem(64, 64, 64), 1.0);
    c->count(), c->count();
  }  // destroyed long before its period: the last flush writes the counts
  auto got = fake.take();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].records[0].calls, 2);
}

// A child forked while the recorder's thread runs holds the thread's handle, not the thread: its
// destructor must neither wait for it (joining hung the child: found in review) nor write the
// parent's counts (the parent writes them).
TEST(LibrarySeen, AForkedChildNeitherWaitsForTheThreadNorWritesTheParentsCounts) {
  Warnings warnings;
  FakeSink fake;
  auto recorder = std::make_unique<SeenRecorder>(fake.sink(), "the test sink", warnings, 1h);
  recorder->counterFor(test::h100(), problem(64, 64, 64), 1.0)->count();  // starts the thread
  // Let the thread reach its wait: the child's copy of the condition variable then counts a waiter
  // that the child does not have (destroying it hung the child: found by CI on a many-core machine).
  std::this_thread::sleep_for(200ms);
  const pid_t child = fork();
  ASSERT_NE(child, -1);
  if (child == 0) {
    alarm(10);  // a hang ends the child with SIGALRM
    recorder.reset();
    _exit(fake.take().empty() ? 0 : 3);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child hung in the destructor (signal " << WTERMSIG(status) << ")";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child wrote the parent's counts";
  recorder.reset();
  const auto got = fake.take();
  ASSERT_EQ(got.size(), 1u);  // the parent's count, written by the parent
  EXPECT_EQ(got[0].records[0].calls, 1);
}

TEST(LibrarySeen, AFailingSinkIsWarnedAboutOnceAndItsCountsDropped) {
  test::WarningCapture capture;
  Warnings warnings;
  FakeSink fake;
  SeenRecorder recorder(fake.sink(), "/somewhere/tune.db", warnings, 1h);
  SeenCounter* c = recorder.counterFor(test::h100(), problem(64, 64, 64), 1.0);
  *fake.fail = true;
  for (int i = 0; i < 3; ++i) {
    c->count();
    EXPECT_NO_THROW(recorder.flush());
  }
  ASSERT_EQ(capture.warnings().size(), 1u) << capture.joined();
  EXPECT_NE(capture.joined().find("cannot record the shapes sgemm() served without a tuned row in /somewhere/tune.db "
                                  "(the store is away)"),
            std::string::npos)
      << capture.joined();
  *fake.fail = false;
  c->count();
  recorder.flush();
  auto got = fake.take();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].records[0].calls, 1);  // the failed flushes' counts are gone
}

class LibrarySeenStore : public ::testing::Test {
 protected:
  std::filesystem::path file() const { return dir_.path() / "user" / "tune.db"; }
  // One flush of one counted call through the store sink at `file()`.
  void recordOneCall() {
    SeenRecorder recorder(storeSink(file().string()), file().string(), warnings_, 1h);
    recorder.counterFor(test::h100(), problem(16, 1023, 3422, "tn"), 0.5)->count();
  }
  test::ScratchDir dir_;
  Warnings warnings_;
};

TEST_F(LibrarySeenStore, TheSinkCreatesTheUserDatabaseOnlyWhenSomethingWasCounted) {
  {
    SeenRecorder recorder(storeSink(file().string()), file().string(), warnings_, 1h);
    recorder.counterFor(test::h100(), problem(64, 64, 64), 1.0);  // prepared, never called
  }
  EXPECT_FALSE(std::filesystem::exists(file()));
  recordOneCall();
  recordOneCall();
  auto store = db::openStore(file().string(), {db::OpenMode::ReadOnly});
  auto rows = store->seen({});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].problem, problem(16, 1023, 3422, "tn"));
  EXPECT_EQ(rows[0].calls, 2);
  EXPECT_DOUBLE_EQ(rows[0].timeMs, 1.0);
  EXPECT_EQ(rows[0].gpuName, test::h100().name);
}

TEST_F(LibrarySeenStore, AnUnwritableDatabaseGetsOneWarningAndNoException) {
  test::WarningCapture capture;
  std::filesystem::create_directories(file().parent_path());
  test::writeBytes(file(), std::string(4096, 'x'));  // damaged: not a database
  EXPECT_NO_THROW(recordOneCall());
  EXPECT_NO_THROW(recordOneCall());
  EXPECT_EQ(test::readBytes(file()), std::string(4096, 'x'));
  // One warning per Library (here: per recorder's Warnings); the second recorder shares it.
  ASSERT_EQ(capture.warnings().size(), 1u) << capture.joined();
  EXPECT_NE(capture.joined().find("cannot record the shapes"), std::string::npos) << capture.joined();

  if (::geteuid() == 0) return;  // root writes a read-only file anyway
  std::filesystem::remove(file());
  recordOneCall();  // a good database now
  std::filesystem::permissions(file(), std::filesystem::perms::owner_read);
  Warnings fresh;
  test::WarningCapture again;
  {
    SeenRecorder recorder(storeSink(file().string()), file().string(), fresh, 1h);
    recorder.counterFor(test::h100(), problem(16, 1023, 3422, "tn"), 0.5)->count();
  }
  ASSERT_EQ(again.warnings().size(), 1u) << again.joined();
  EXPECT_NE(again.joined().find("read-only"), std::string::npos) << again.joined();
}

TEST(LibrarySeenSwitch, OptionAndEnvironment) {
  EXPECT_TRUE(recordingSeen(true, nullptr));
  EXPECT_FALSE(recordingSeen(false, nullptr));
  EXPECT_FALSE(recordingSeen(false, "1"));
  for (const char* off : {"0", "false", "OFF", "no"}) EXPECT_FALSE(recordingSeen(true, off)) << off;
  for (const char* on : {"1", "yes", ""}) EXPECT_TRUE(recordingSeen(true, on)) << on;
  Warnings warnings;
  EXPECT_EQ(seenRecorderFor("x.db", false, warnings), nullptr);
  ::setenv("GEMMTUNE_RECORD_SEEN", "0", 1);
  EXPECT_EQ(seenRecorderFor("x.db", true, warnings), nullptr);
  ::unsetenv("GEMMTUNE_RECORD_SEEN");
  EXPECT_NE(seenRecorderFor("x.db", true, warnings), nullptr);
}

TEST(LibrarySeenSwitch, ALibraryThatServedNothingWritesNothing) {
  test::ScratchDir dir;
  const auto file = dir.path() / "tune.db";
  {
    Library::Options options;
    options.stores = {file.string()};
    Library lib(options);
    // Without a GPU sgemm() serves nothing; with one it would need a context: either way no count.
    lib.sgemm(nullptr, 64, 64, 64, 1.0f, nullptr, 64, nullptr, 64, 0.0f, nullptr, 64);
  }
  EXPECT_FALSE(std::filesystem::exists(file));
}

TEST(LibrarySeenEstimate, PredictionThenMeasuredRateThenRoofline) {
  const GpuSpec gpu = test::h100();
  EXPECT_DOUBLE_EQ(estimatedCallMs(0.3, 20000, gpu, GemmShape{1024, 1024, 1024}), 0.3);
  // 2·1024³ FLOP at 1000 GFLOP/s: 2.147 ms.
  EXPECT_NEAR(estimatedCallMs(0, 1000, gpu, GemmShape{1024, 1024, 1024}), 2.147483648, 1e-9);
  // The built-in default: compute-bound at 4096³ (the FP32 peak), memory-bound as a GEMV.
  const double square = estimatedCallMs(0, 0, gpu, GemmShape{4096, 4096, 4096});
  EXPECT_GT(square, 1.0);  // 137 GFLOP at no more than ~70 TFLOP/s
  EXPECT_LT(square, 10.0);
  const double gemv = estimatedCallMs(0, 0, gpu, GemmShape{8192, 1, 8192});
  // The family model's roofline: A, B, and C read and written (β unknown), plus a 3 µs launch.
  const double bytes = 4.0 * (8192.0 * 8192 + 8192 + 2 * 8192);
  EXPECT_NEAR(gemv, bytes / (2.0 * gpu.memClockKhz * 1e3 * gpu.memBusWidthBits / 8) * 1e3 + 0.003, 1e-9);
  EXPECT_GT(estimatedCallMs(0, 0, GpuSpec{}, GemmShape{64, 64, 64}), 0.0);  // a spec without limits
}

}  // namespace
}  // namespace gemmtune::library
