// Deployment snapshots (issue 14 item 3): `gemmtune db snapshot` from a PostgreSQL server the
// test starts (tests/pg_server.hpp) and from SQLite gives a SQLite file whose rows for the chosen
// GPU equal the source's (keys, statuses, medians, cubin bytes), without other GPUs' rows or
// failures; the library reads a snapshot offline and prefers a user store's answer over it; a
// bad --from is one line with the right exit code and no password.
// Run: ctest -R snapshot
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>

#include "CliRunner.hpp"
#include "Database.hpp"
#include "ExitCodes.hpp"
#include "SystemSnapshot.hpp"
#include "gemmtune/Library.hpp"
#include "library_test_support.hpp"
#include "pg_server.hpp"
#include "store_schema_v1.hpp"

namespace gemmtune::db {
namespace {

using test::okResult;
using test::runCli;

GpuSpec gpuA() { return test::h100(); }
GpuSpec gpuB() { return findGpuProfile("a100")->spec; }

// Rows of two GPUs: ok rows with cubins, a failure, cuBLAS baselines.
void fill(ResultStore& store) {
  for (const auto& gpu : {gpuA(), gpuB()}) {
    auto run = store.beginRun(test::testRun(gpu));
    auto a = okResult("blocktile1d_bm64_bn64_bk8_tm8", 4096, 4096, 4096, 17000, gpu);
    a.cubin = std::string("\x7f" "ELF\0\x01\xff", 7) + gpu.name;  // NULs and high bytes
    a.measuredAt = "2025-01-31T12:00:01.000000Z";
    auto b = okResult("smem_bs32", 2048, 2048, 2048, 9000, gpu);
    b.cubin = "cubin-b";
    ASSERT_TRUE(store.recordResult(run, a));
    ASSERT_TRUE(store.recordResult(run, b));
    ASSERT_TRUE(store.recordResult(run, test::compileError("smem_bs16", 4096, 4096, 4096, gpu)));
    ASSERT_TRUE(store.recordBaseline(run, test::cublasBaseline(4096, 2.5, "13.0.0")));
    store.endRun(run);
  }
}

std::vector<StoredResult> rowsOf(const ResultStore& store, const std::string& fingerprint, bool okOnly) {
  ResultFilter f;
  f.withCubin = true;
  if (okOnly) f.status = "ok";
  std::vector<StoredResult> out;
  for (auto& r : store.results(f))
    if (r.key.gpuFingerprint == fingerprint) out.push_back(std::move(r));
  std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.cacheKeyHash < y.cacheKeyHash; });
  return out;
}

class SnapshotTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "postgresql") {
      if (auto why = test::PgServer::unavailableReason(); !why.empty()) GTEST_SKIP() << why;
      server_ = std::make_unique<test::PgServer>();
      from_ = server_->createDatabase("snapshot_src");
    } else {
      from_ = "sqlite:" + (dir_ / "src.db").string();
    }
    fill(*openStore(from_, {OpenMode::ReadWrite}));
  }
  test::ScratchDir dir_;
  std::unique_ptr<test::PgServer> server_;
  std::string from_;
};

TEST_P(SnapshotTest, OneGpusRowsEqualTheSource) {
  auto out = (dir_ / "h100.db").string();
  auto res = runCli({"db", "snapshot", "--from", from_, "--gpu", "h100", "-o", out});
  ASSERT_EQ(res.exitCode, 0) << res.err;
  EXPECT_EQ(res.out.find(test::PgServer::kPassword), std::string::npos) << res.out;
  EXPECT_NE(res.out.find("2 ok result(s)"), std::string::npos) << res.out;
  for (const auto& e : std::filesystem::directory_iterator(dir_.path()))  // one self-contained file
    if (e.path().filename().string().starts_with("h100.db")) {
      EXPECT_EQ(e.path().filename(), "h100.db") << e.path();
    }
  {
    // Rollback-journal mode (header byte 18 is 1; 2 means WAL): opens read-only from a read-only
    // directory, where a WAL database cannot create its -shm file.
    std::ifstream in(out, std::ios::binary);
    char header[20] = {};
    in.read(header, sizeof header);
    EXPECT_EQ(header[18], 1);
  }

  auto src = openStore(from_, {OpenMode::ReadOnly});
  auto snap = openStore(out, {OpenMode::ReadOnly});
  auto fa = gpuFingerprint(gpuA()), fb = gpuFingerprint(gpuB());
  auto want = rowsOf(*src, fa, true);
  auto got = rowsOf(*snap, fa, false);  // failures stay behind
  ASSERT_EQ(want.size(), 2u);
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    test::expectSameMeasurement(got[i], want[i]);
    EXPECT_EQ(snap->cubinOf(got[i].id), want[i].cubin);
  }
  EXPECT_TRUE(rowsOf(*snap, fb, false).empty());
  ASSERT_EQ(snap->gpus().size(), 1u);
  EXPECT_EQ(snap->gpus()[0].fingerprint, fa);
  ASSERT_EQ(snap->runs().size(), 1u);
  EXPECT_FALSE(snap->runs()[0].endedAt.empty());
  ASSERT_EQ(snap->baselines().size(), 1u);
  EXPECT_EQ(snap->baselines()[0].gpuFingerprint, fa);
  EXPECT_EQ(snap->baselineGflops(snap->gpus()[0].id, {4096, 4096, 4096}), src->baselineGflops(*src->gpuId(fa), {4096, 4096, 4096}));

  // An existing file is refused, then replaced with --force.
  auto again = runCli({"db", "snapshot", "--from", from_, "--gpu", "h100", "-o", out});
  EXPECT_EQ(again.exitCode, kExitUsage) << again.err;
  EXPECT_NE(again.err.find("--force"), std::string::npos) << again.err;
  EXPECT_EQ(runCli({"db", "snapshot", "--from", from_, "-o", out, "--force"}).exitCode, 0);
  auto all = openStore(out, {OpenMode::ReadOnly});
  EXPECT_EQ(all->gpus().size(), 2u);
  EXPECT_EQ(rowsOf(*all, fb, false).size(), 2u);
}

INSTANTIATE_TEST_SUITE_P(Backends, SnapshotTest, ::testing::Values("sqlite", "postgresql"),
                         [](const auto& info) { return info.param; });

TEST(SnapshotErrors, ABadSourceIsOneLineWithoutThePassword) {
  test::ScratchDir dir;
  auto out = (dir / "x.db").string();
  auto url = fmt::format("postgresql://tuner:Hidden-Pw-55@127.0.0.1:{}/db?connect_timeout=3", test::PgServer::freePort());
  auto res = runCli({"db", "snapshot", "--from", url, "-o", out});
  EXPECT_EQ(res.exitCode, kExitUnavailable) << res.err;
  EXPECT_EQ(res.err.find("Hidden-Pw-55"), std::string::npos) << res.err;
  EXPECT_NE(res.err.find("tuner:***@127.0.0.1"), std::string::npos) << res.err;
  EXPECT_EQ(std::count(res.err.begin(), res.err.end(), '\n'), 1) << res.err;
  EXPECT_FALSE(std::filesystem::exists(out));

  auto missing = runCli({"db", "snapshot", "--from", (dir / "none.db").string(), "-o", out});
  EXPECT_EQ(missing.exitCode, kExitIoError) << missing.err;
  EXPECT_EQ(std::count(missing.err.begin(), missing.err.end(), '\n'), 1) << missing.err;
  EXPECT_FALSE(std::filesystem::exists(out));

  auto src = "sqlite:" + (dir / "src.db").string();
  fill(*openStore(src, {OpenMode::ReadWrite}));
  auto unknown = runCli({"db", "snapshot", "--from", src, "--gpu", "v100", "-o", out});
  EXPECT_EQ(unknown.exitCode, kExitUsage) << unknown.err;
  EXPECT_FALSE(std::filesystem::exists(out));
}

// The library: a system snapshot read offline, a user store that takes precedence.
TEST(SnapshotLibrary, TheUserStoreWinsOverTheSystemSnapshot) {
  test::ScratchDir dir;
  auto src = (dir / "src.db").string();
  auto system = (dir / "system.db").string();
  auto user = (dir / "user.db").string();
  test::writeDatabase(src, gpuA(),
                      {okResult("blocktile1d_bm64_bn64_bk8_tm8", 4096, 4096, 4096, 17000, gpuA()),
                       okResult("smem_bs32", 2048, 2048, 2048, 9000, gpuA())});
  ASSERT_EQ(runCli({"db", "snapshot", "--from", src, "--gpu", "h100", "-o", system}).exitCode, 0);
  std::filesystem::remove(src);
  // The snapshot alone: read offline, from a read-only file.
  std::filesystem::permissions(system, std::filesystem::perms::owner_read | std::filesystem::perms::group_read);
  {
    Library lib(Library::Options{{system}});
    Choice c = lib.best(gpuA(), 4096, 4096, 4096);
    EXPECT_EQ(c.match, Match::exact);
    EXPECT_EQ(c.instance, "blocktile1d_bm64_bn64_bk8_tm8");
  }
  test::writeDatabase(user, gpuA(), {okResult("smem_bs16", 4096, 4096, 4096, 5000, gpuA())});
  test::WarningCapture warnings;
  for (int viaEnv = 0; viaEnv < 2; ++viaEnv) {
    if (viaEnv) ::setenv("GEMMTUNE_SYSTEM_DB", system.c_str(), 1);
    Library lib = viaEnv ? Library(std::filesystem::path(user)) : Library(Library::Options{{user, system}});
    Choice c = lib.best(gpuA(), 4096, 4096, 4096);  // in both: the user's row wins, though slower
    EXPECT_EQ(c.match, Match::exact);
    EXPECT_EQ(c.instance, "smem_bs16");
    Choice d = lib.best(gpuA(), 2048, 2048, 2048);  // only in the snapshot
    EXPECT_EQ(d.match, Match::exact);
    EXPECT_EQ(d.instance, "smem_bs32");
  }
  ::unsetenv("GEMMTUNE_SYSTEM_DB");
  // No user database yet: the snapshot answers, without a warning about the missing one.
  Library fresh(Library::Options{{(dir / "missing.db").string(), system}});
  EXPECT_EQ(fresh.best(gpuA(), 2048, 2048, 2048).instance, "smem_bs32");
  EXPECT_TRUE(warnings.warnings().empty()) << warnings.joined();
}

// A snapshot written before batches (schema 1), deployed read-only: the library still serves its
// rows, as nn single products, and `db snapshot` copies it into a current one. Neither writes it.
TEST(SnapshotLibrary, ASnapshotOfSchemaOneStillServes) {
  test::ScratchDir dir;
  auto old = dir / "system-v1.db";
  auto row = okResult("blocktile1d_bm64_bn64_bk8_tm8", 4096, 4096, 4096, 17000, gpuA());
  row.measuredAt = "2025-01-31T12:00:01.000000Z";
  test::writeSchemaV1Sqlite(old, test::schemaV1Rows(gpuA(), {row}, 2.5));
  std::filesystem::permissions(old, std::filesystem::perms::owner_read | std::filesystem::perms::group_read);
  const std::string before = test::readBytes(old);
  {
    Library lib(Library::Options{{old.string()}});
    Choice c = lib.best(gpuA(), 4096, 4096, 4096);
    EXPECT_EQ(c.match, Match::exact);
    EXPECT_EQ(c.instance, "blocktile1d_bm64_bn64_bk8_tm8");
  }
  auto current = (dir / "system.db").string();
  auto res = runCli({"db", "snapshot", "--from", old.string(), "-o", current});
  ASSERT_EQ(res.exitCode, 0) << res.err;
  EXPECT_NE(res.out.find("1 ok result(s), 1 baseline(s)"), std::string::npos) << res.out;
  EXPECT_EQ(test::readBytes(old), before);
  auto snap = openStore(current, {OpenMode::ReadOnly});
  auto rows = snap->results({});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].key.problem, (ProblemKey{4096, 4096, 4096, "nn", "any", 1}));
  EXPECT_EQ(rows[0].cacheKeyHash, row.key.hash());
  EXPECT_EQ(Database(current, {OpenMode::ReadOnly, OpenCheck::Quick}).queryInt("PRAGMA main.user_version"),
            kSchemaVersion);
}

// The default system snapshot: <prefix>/share/gemmtune/system.db beside the installed library,
// read only when it exists; $GEMMTUNE_SYSTEM_DB overrides it, and set but empty turns it off.
TEST(SystemSnapshot, TheInstalledSnapshotIsFoundBesideTheLibraryUnlessTheEnvironmentSaysOtherwise) {
  test::ScratchDir dir;
  const auto prefix = dir / "opt/gemmtune";
  const auto libDir = prefix / "lib";
  const auto installed = library::installedSystemSnapshot(libDir);
  EXPECT_TRUE(installed.string().ends_with("share/gemmtune/system.db")) << installed;
  EXPECT_TRUE(installed.string().starts_with(dir.path().string())) << installed;

  EXPECT_EQ(library::systemSnapshotLocation(nullptr, libDir), std::nullopt) << "not installed: nothing to read";
  std::filesystem::create_directories(installed.parent_path());
  test::writeDatabase(installed, gpuA(), {okResult("smem_bs32", 2048, 2048, 2048, 9000, gpuA())});
  EXPECT_EQ(library::systemSnapshotLocation(nullptr, libDir), installed.string());
  EXPECT_EQ(library::systemSnapshotLocation("/elsewhere/h100.db", libDir), "/elsewhere/h100.db");
  EXPECT_EQ(library::systemSnapshotLocation("", libDir), std::nullopt) << "set but empty turns it off";
  EXPECT_EQ(library::systemSnapshotLocation(nullptr, {}), std::nullopt);

  // This code's own file is found (here the test program, which links the library's objects).
  std::error_code ec;
  EXPECT_EQ(library::thisLibraryDir(), std::filesystem::read_symlink("/proc/self/exe", ec).parent_path());

  // The library reads what the rule finds, after the user's store.
  Library lib(Library::Options{{(dir / "user.db").string(), *library::systemSnapshotLocation(nullptr, libDir)}});
  EXPECT_EQ(lib.best(gpuA(), 2048, 2048, 2048).instance, "smem_bs32");
}

}  // namespace
}  // namespace gemmtune::db
