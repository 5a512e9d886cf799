// CompileCache: a second compile is served from disk; any change to the exact source misses;
// damaged entries are misses; entries appear atomically.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "Compiler.hpp"
#include "FamilyRegistry.hpp"
#include "scratch_dir.hpp"

using namespace gemmtune;
namespace fs = std::filesystem;

namespace {

using TempDir = test::ScratchDir;

size_t countEntries(const fs::path& dir) {
  size_t n = 0;
  for (auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) {
      EXPECT_EQ(e.path().extension(), ".cbor") << "stray file " << e.path();
      ++n;
    }
  return n;
}

Config classic() { return FamilyRegistry::builtin().parseName("blocktile1d_bm64_bn64_bk8_tm8"); }

}  // namespace

TEST(CompileCache, SecondCompileIsAHitWithIdenticalOutput) {
  TempDir cache;
  Compiler compiler({{}, cache.path(), 1});
  auto first = compiler.compile(classic(), "sm_90");
  ASSERT_TRUE(first.ok);
  EXPECT_FALSE(first.fromCache);
  EXPECT_EQ(countEntries(cache.path()), 1u);
  auto second = compiler.compile(classic(), "sm_90");
  EXPECT_TRUE(second.fromCache);
  EXPECT_EQ(second.ptx, first.ptx);
  EXPECT_EQ(second.cubin, first.cubin);
  EXPECT_EQ(second.loweredName, first.loweredName);
  EXPECT_EQ(second.resources.registers, first.resources.registers);
  EXPECT_EQ(second.sourceHash, first.sourceHash);
  // Another arch is another entry.
  EXPECT_FALSE(compiler.compile(classic(), "sm_80").fromCache);
  EXPECT_EQ(countEntries(cache.path()), 2u);
}

TEST(CompileCache, OneChangedTemplateByteMisses) {
  TempDir cache, templates;
  const auto& family = *classic().family;
  const CompileUnit unit = Compiler({{}, {}, 1}).unit(classic());
  std::string source = unit.source;
  {
    std::ofstream(templates.path() / family.templateFile) << source;
    for (const auto& [name, text] : unit.headers) std::ofstream(templates.path() / name) << text;
  }
  Compiler fromDir({templates.path(), cache.path(), 1});
  EXPECT_FALSE(fromDir.compile(classic(), "sm_90").fromCache);
  EXPECT_TRUE(fromDir.compile(classic(), "sm_90").fromCache);
  // The embedded copy is byte-identical, so it shares the entry.
  EXPECT_TRUE(Compiler({{}, cache.path(), 1}).compile(classic(), "sm_90").fromCache);
  source.back() = source.back() == '\n' ? ' ' : '\n';
  {
    std::ofstream(templates.path() / family.templateFile) << source;
  }
  auto changed = fromDir.compile(classic(), "sm_90");
  EXPECT_FALSE(changed.fromCache);
  EXPECT_TRUE(changed.ok);
}

TEST(CompileCache, DamagedEntryIsAMissAndIsRewritten) {
  TempDir cache;
  Compiler compiler({{}, cache.path(), 1});
  ASSERT_TRUE(compiler.compile(classic(), "sm_90").ok);
  for (auto& e : fs::recursive_directory_iterator(cache.path()))
    if (e.is_regular_file()) fs::resize_file(e.path(), 10);
  auto again = compiler.compile(classic(), "sm_90");
  EXPECT_FALSE(again.fromCache);
  EXPECT_TRUE(again.ok);
  EXPECT_TRUE(compiler.compile(classic(), "sm_90").fromCache);
}

TEST(CompileCache, CompileErrorsAreCachedToo) {
  TempDir cache;
  const auto& bt = FamilyRegistry::builtin().get("blocktile1d");
  Config bad{&bt, {64, 64, 8, 3}, false};
  Compiler compiler({{}, cache.path(), 1});
  EXPECT_FALSE(compiler.compile(bad, "sm_90").ok);
  auto hit = compiler.compile(bad, "sm_90");
  EXPECT_TRUE(hit.fromCache);
  EXPECT_FALSE(hit.ok);
  EXPECT_NE(hit.log.find("TM must divide BM"), std::string::npos);
}

TEST(CompileCache, ConcurrentWritersLeaveOneCompleteEntry) {
  TempDir cache;
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] { EXPECT_TRUE(Compiler({{}, cache.path(), 1}).compile(classic(), "sm_90").ok); });
  for (auto& t : threads) t.join();
  EXPECT_EQ(countEntries(cache.path()), 1u);
  EXPECT_TRUE(Compiler({{}, cache.path(), 1}).compile(classic(), "sm_90").fromCache);
}

TEST(CompileCache, UnwritableDirectoryOnlyCostsSpeed) {
  Compiler compiler({{}, "/proc/gemmtune-no-such-dir", 1});
  auto r = compiler.compile(classic(), "sm_90");
  EXPECT_TRUE(r.ok);
  EXPECT_FALSE(compiler.compile(classic(), "sm_90").fromCache);
}

TEST(Compiler, CancelPendingDropsQueuedCompilesButFinishesRunningOnes) {
  Compiler compiler({{}, {}, 1});
  const auto& bt = FamilyRegistry::builtin().get("blocktile1d");
  std::vector<std::shared_future<CompileResult>> futures;
  for (int tm : {4, 8, 16, 32}) futures.push_back(compiler.submit(Config{&bt, {64, 64, 8, tm}, false}, "sm_90"));
  futures.push_back(compiler.submit(Config{&bt, {64, 32, 8, 8}, false}, "sm_90"));
  size_t dropped = compiler.cancelPending();
  EXPECT_GE(dropped, 3u);  // one worker: at most one compile had started
  size_t broken = 0;
  for (auto& f : futures) {
    try {
      EXPECT_TRUE(f.get().ok);
    } catch (const std::future_error& e) {
      EXPECT_EQ(e.code(), std::future_errc::broken_promise);
      ++broken;
    }
  }
  EXPECT_EQ(broken, dropped);
}

// A configuration in the disk cache is ready at once, not queued behind compiles still pending
// (a cold tune's first family waited for the whole prefetch queue: 37 s on an H100 host).
TEST(Compiler, ACachedConfigurationIsReadyWhileOthersAreStillQueued) {
  TempDir cache;
  Compiler compiler({{}, cache.path(), 1});
  const auto& bt = FamilyRegistry::builtin().get("blocktile1d");
  const Config cached{&bt, {64, 64, 8, 8}, false};
  ASSERT_TRUE(compiler.compile(cached, "sm_90").ok);
  std::vector<Config> queue;
  for (int bm : {32, 64, 128})
    for (int tm : {4, 16, 32}) queue.push_back(Config{&bt, {bm, 64, 8, tm}, false});
  compiler.prefetch(queue, "sm_90");  // one worker: the queue takes seconds
  auto f = compiler.submit(cached, "sm_90");
  ASSERT_EQ(f.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  EXPECT_TRUE(f.get().ok);
  EXPECT_TRUE(f.get().fromCache);
  compiler.cancelPending();
}

// A prefetched configuration still queued is not compiled again when the tuner asks for it, and
// the one the tuner waits for goes ahead of the prefetches still queued.
TEST(Compiler, ASubmitJoinsTheCompileAlreadyQueuedAndMovesItFirst) {
  // One worker. A disk cache, so that a compile that finished before its submit is read back
  // rather than compiled again: then the count says exactly whether a submit joined or re-ran
  // (without one, the first config may finish unseen and the count raced: it failed now and then).
  TempDir cache;
  Compiler compiler({{}, cache.path(), 1});
  const auto& bt = FamilyRegistry::builtin().get("blocktile1d");
  std::vector<Config> configs;
  for (int tm : {4, 8, 16, 32}) configs.push_back(Config{&bt, {64, 64, 8, tm}, false});
  compiler.prefetch(configs, "sm_90");
  auto fourth = compiler.submit(configs[3], "sm_90");
  EXPECT_TRUE(fourth.get().ok);
  // The first compile (running), the fourth, perhaps the next one started: not all four, as in
  // queue order.
  EXPECT_LE(compiler.nvrtcCompiles(), 3);
  // Every one asked for again: joined while queued or running, read from the cache once done.
  for (int i : {0, 1, 2, 3}) EXPECT_TRUE(compiler.submit(configs[i], "sm_90").get().ok);
  EXPECT_EQ(compiler.nvrtcCompiles(), 4);  // each once
}

// Finished compiles are not kept in memory: without a disk cache a later submit compiles again.
TEST(Compiler, AFinishedCompileIsNotKeptInMemory) {
  Compiler compiler({{}, {}, 1});
  const auto& bt = FamilyRegistry::builtin().get("blocktile1d");
  const Config config{&bt, {64, 64, 8, 8}, false};
  EXPECT_TRUE(compiler.submit(config, "sm_90").get().ok);
  EXPECT_TRUE(compiler.submit(config, "sm_90").get().ok);
  EXPECT_EQ(compiler.nvrtcCompiles(), 2);
}

// A launch-only parameter (cutlass's SPLITK) is no template argument: configurations differing
// only there are one program, and a submit of one joins the compile of the other.
TEST(Compiler, ConfigurationsDifferingInALaunchOnlyParameterCompileOnce) {
  Compiler compiler({{}, {}, 1});  // no disk cache: every NVRTC run is counted
  Family sliced = FamilyRegistry::builtin().get("blocktile1d");
  sliced.params.push_back({"SLICES", "sl", {1, 4}, "read by the plan only", /*launchOnly=*/true});
  const Config one{&sliced, {64, 64, 8, 8, 1}, false}, four{&sliced, {64, 64, 8, 8, 4}, false};
  ASSERT_NE(one.name(), four.name());
  auto a = compiler.submit(one, "sm_90");
  auto b = compiler.submit(four, "sm_90");
  EXPECT_TRUE(a.get().ok);
  EXPECT_TRUE(b.get().ok);
  EXPECT_EQ(a.get().loweredName, b.get().loweredName);
  EXPECT_EQ(compiler.nvrtcCompiles(), 1);
}
