// The CLI against hostile input and output (issue 13): special files as outputs, deeply nested
// and out-of-range import files, read-only directories, full disks and full stdout, overflowing
// parameters, bad option values and leftovers. Each test failed before its fix.
// Run: ctest -R hostileCli
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <chrono>
#include <set>
#include <thread>

#include "CliRunner.hpp"
#include "Database.hpp"
#include "SqliteStore.hpp"
#include "db_test_support.hpp"

using namespace gemmtune;
using namespace gemmtune::db;
using gemmtune::test::CliConditions;
using gemmtune::test::runCli;
using gemmtune::test::runCliUnder;

namespace {

struct HostileFixture : test::ScratchDbTest {
  void populate() {
    Database database(db, {OpenMode::ReadWrite, OpenCheck::Quick});
    SqliteStore store(database);
    test::recordTwoOkRows(store);
  }
  // A valid export of populate()'s rows, as parsed JSON.
  nlohmann::json exported() {
    populate();
    auto out = (dir / "export.json").string();
    auto r = runCli({"export", "--db", db, out});
    EXPECT_EQ(r.exitCode, 0) << r.err;
    return nlohmann::json::parse(test::readBytes(out));
  }
  std::string writeJson(const std::string& name, const std::string& text) {
    auto p = (dir / name).string();
    test::writeBytes(p, text);
    return p;
  }
  bool onlyTheseFilesIn(const std::filesystem::path& d, std::set<std::string> names) {
    std::set<std::string> present;
    for (const auto& e : std::filesystem::directory_iterator(d)) present.insert(e.path().filename().string());
    return present == names;
  }
};

// The last key of a template before which `depth` nested objects are spliced in.
std::string nested(int depth) {
  std::string s;
  s.reserve(static_cast<size_t>(depth) * 6 + 2);
  for (int i = 0; i < depth; ++i) s += "{\"a\":";
  s += "1";
  s.append(static_cast<size_t>(depth), '}');
  return s;
}

}  // namespace

using hostileCli = HostileFixture;

// --- defect 1: special files ------------------------------------------------------------------

TEST_F(hostileCli, ExportToAFifoWritesThroughItAndKeepsIt) {
  populate();
  auto fifo = dir / "out.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] { received = test::readBytes(fifo); });
  auto r = runCli({"export", "--db", db, fifo.string()});
  reader.join();
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(std::filesystem::is_fifo(fifo));
  EXPECT_EQ(nlohmann::json::parse(received)["format"], "gemmtune-results");
}

TEST_F(hostileCli, ExportAndReportThroughASymlinkReplaceItsTargetNotTheLink) {
  populate();
  auto real = dir / "real.json", link = dir / "link.json";
  test::writeBytes(real, "old");
  std::filesystem::create_symlink(real, link);
  auto r = runCli({"export", "--db", db, link.string()});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_EQ(nlohmann::json::parse(test::readBytes(real))["format"], "gemmtune-results");

  auto page = dir / "page.html", pageLink = dir / "page-link.html";
  std::filesystem::create_symlink(page, pageLink);  // dangling: the target is created
  auto rep = runCli({"report", "--db", db, "--gpu", "h100", "-o", pageLink.string()});
  EXPECT_EQ(rep.exitCode, 0) << rep.err;
  EXPECT_TRUE(std::filesystem::is_symlink(pageLink));
  EXPECT_NE(test::readBytes(page).find("<html"), std::string::npos);
}

// --- defect 2: nested params --------------------------------------------------------------------

TEST_F(hostileCli, ImportRefusesDeeplyNestedParams) {
  auto doc = exported();
  std::string text = doc.dump();
  auto at = text.find("\"params\":{");
  ASSERT_NE(at, std::string::npos);
  text.replace(at + 9, text.find('}', at) - (at + 9) + 1, nested(70000));
  auto file = writeJson("deep.json", text);
  auto other = (dir / "other.db").string();
  auto r = runCli({"import", "--db", other, file});
  EXPECT_EQ(r.exitCode, 65) << r.err;
  EXPECT_NE(r.err.find("nested deeper"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(other));
}

TEST_F(hostileCli, ImportRefusesParamsThatAreNotTheFamilysIntegers) {
  auto doc = exported();
  auto other = (dir / "other.db").string();
  for (auto params : {nlohmann::json{{"BLOCKSIZE", "32"}}, nlohmann::json{{"BLOCKSIZE", -32}},
                      nlohmann::json{{"BLOCKSIZE", 32}, {"EXTRA", 1}}, nlohmann::json{{"BLOCKSIZE", 16}}}) {
    auto changed = doc;
    for (auto& res : changed["results"])
      if (res["family"] == "smem") res["params"] = params;
    auto r = runCli({"import", "--db", other, writeJson("bad.json", changed.dump())});
    EXPECT_EQ(r.exitCode, 65) << params.dump() << ": " << r.err;
    EXPECT_NE(r.err.find("params"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(other));
}

TEST_F(hostileCli, StoredNestedParamsDoNotCrashExportOrResults) {
  populate();
  {
    Database database(db, {OpenMode::ReadWrite, OpenCheck::Quick});
    database.prepare("UPDATE results SET params = ?").bind(1, nested(70000)).run();
  }
  auto e = runCli({"export", "--db", db, "-"});
  EXPECT_EQ(e.exitCode, 0) << e.err;
  EXPECT_EQ(nlohmann::json::parse(e.out)["results"][0]["params"], nlohmann::json::object());
  auto r = runCli({"results", "--db", db, "--json"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_LT(r.out.size(), 100000u);
}

// --- defect 3: read-only directory ---------------------------------------------------------------

TEST_F(hostileCli, ReadCommandsWorkInAReadOnlyDirectory) {
  populate();
  {
    // A WAL database whose -wal and -shm files stay behind, as a crashed or live tuner leaves them.
    Database database(db, {OpenMode::ReadWrite, OpenCheck::Quick});
    database.exec("PRAGMA wal_checkpoint");
  }
  std::filesystem::permissions(dir.path(), std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                                               std::filesystem::perms::group_exec | std::filesystem::perms::others_read |
                                               std::filesystem::perms::others_exec);
  auto readOnlyDir = dir / "shared";
  std::filesystem::create_directory(readOnlyDir);
  auto shared = (readOnlyDir / "tune.db").string();
  std::filesystem::copy_file(db, shared);
  ::chmod(shared.c_str(), 0644);
  ::chmod(readOnlyDir.c_str(), 0555);
  CliConditions nobody;
  nobody.unprivileged = true;
  for (std::vector<std::string> args :
       {std::vector<std::string>{"results", "--db", shared}, {"query", "--db", shared, "--gpu", "h100", "--size", "4096"},
        {"export", "--db", shared, "-"}, {"db", "check", "--db", shared}}) {
    auto r = runCliUnder(args, nobody);
    EXPECT_EQ(r.exitCode, 0) << args[0] << ": " << r.err;
  }
  ::chmod(readOnlyDir.c_str(), 0755);
}

// --- defect 4: output errors ----------------------------------------------------------------------

TEST_F(hostileCli, EveryCommandExits74WhenStdoutIsFull) {
  populate();
  CliConditions full;
  full.stdoutPath = "/dev/full";
  for (std::vector<std::string> args :
       {std::vector<std::string>{"export", "--db", db, "-"},
        {"query", "--db", db, "--gpu", "h100", "--size", "4096"},
        {"results", "--db", db},
        {"report", "--db", db, "--gpu", "h100", "-o", "-"},
        {"db", "check", "--db", db},
        {"space", "--gpu", "h100", "--family", "smem"},
        {"ptx", "smem_bs32", "--arch", "sm_90", "--stats"},
        {"--help"}}) {
    auto r = runCliUnder(args, full);
    EXPECT_EQ(r.exitCode, 74) << args[0] << ": " << r.err;
  }
}

// --- defect 5: overflowing parameters ------------------------------------------------------------

TEST_F(hostileCli, ParametersAboveTheirBoundAreRefusedBeforeCompiling) {
  auto ptx = runCli({"ptx", "smem_bs65536", "--arch", "sm_90"});
  EXPECT_EQ(ptx.exitCode, 2) << ptx.err;
  EXPECT_NE(ptx.err.find("BLOCKSIZE=65536 is above the largest accepted value 512"), std::string::npos) << ptx.err;
  auto space = runCli({"space", "--gpu", "h100", "--family", "blocktile1d", "--params",
                       "BM=1048544,BN=32,BK=1024,TM=1048544"});
  EXPECT_EQ(space.exitCode, 2) << space.out << space.err;
  EXPECT_NE(space.err.find("BM=1048544 is above"), std::string::npos) << space.err;
}

// --- defect 6: exit codes and messages ------------------------------------------------------------

TEST_F(hostileCli, OutOfRangeNumberInAnImportIs65NamingTheField) {
  std::string text = exported().dump();
  auto at = text.find("\"gflops\":");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, text.find(',', at) - at, "\"gflops\":1e400");
  auto r = runCli({"import", "--db", (dir / "other.db").string(), writeJson("big.json", text)});
  EXPECT_EQ(r.exitCode, 65) << r.err;
  EXPECT_NE(r.err.find("gflops"), std::string::npos) << r.err;
}

TEST_F(hostileCli, ImportRefusesImpossibleTimestampsAndARunOfAnotherGpu) {
  auto doc = exported();
  auto other = (dir / "other.db").string();
  auto late = doc;
  late["results"][0]["measured_at"] = "2025-13-45T99:99:99.000000Z";
  auto r = runCli({"import", "--db", other, writeJson("late.json", late.dump())});
  EXPECT_EQ(r.exitCode, 65) << r.err;
  EXPECT_NE(r.err.find("measured_at"), std::string::npos) << r.err;

  {
    // The same run uid already stored for another GPU.
    Database database(other, {OpenMode::ReadWrite, OpenCheck::Quick});
    SqliteStore store(database);
    RunInfo run = test::testRun(test::testGpu(100));
    run.uid = doc["runs"][0]["uid"];
    store.beginRun(run);
  }
  auto stolen = runCli({"import", "--db", other, (dir / "export.json").string()});
  EXPECT_EQ(stolen.exitCode, 65) << stolen.err;
  EXPECT_NE(stolen.err.find("another GPU"), std::string::npos) << stolen.err;
}

TEST_F(hostileCli, NanBudgetAndEmptySizesAreUsageErrors) {
  EXPECT_EQ(runCli({"tune", "--gpu", "auto", "--budget", "nan", "--db", db}).exitCode, 2);
  EXPECT_EQ(runCli({"space", "--gpu", "h100", "--family", "smem", "--size", ""}).exitCode, 2);
  EXPECT_EQ(runCli({"results", "--db", db, "--size", ""}).exitCode, 2);
  EXPECT_EQ(runCli({"query", "--db", db, "--size", ""}).exitCode, 2);
}

TEST_F(hostileCli, QueryRunsTheSameCheckAsDbCheckOnADamagedFile) {
  populate();
  auto bytes = test::readBytes(db);
  ASSERT_GT(bytes.size(), 8192u);
  // Garbage over the last page, which a lookup at 4096 need not read.
  for (size_t i = bytes.size() - 4096; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 131 % 251);
  test::writeBytes(db, bytes);
  EXPECT_EQ(runCli({"db", "check", "--db", db}).exitCode, 65);
  auto q = runCli({"query", "--db", db, "--gpu", "h100", "--size", "4096"});
  EXPECT_EQ(q.exitCode, 65) << q.out << q.err;
}

TEST_F(hostileCli, AnEmptyFileReadsAsNoResults) {
  test::writeBytes(db, "");
  auto check = runCli({"db", "check", "--db", db});
  EXPECT_EQ(check.exitCode, 0) << check.err;
  EXPECT_NE(check.out.find("empty"), std::string::npos) << check.out;
  auto e = runCli({"export", "--db", db, (dir / "out.json").string()});
  EXPECT_EQ(e.exitCode, 1) << e.err;
}

TEST_F(hostileCli, QueryHintNamesTheRealOption) {
  populate();
  auto r = runCli({"query", "--db", db, "--gpu", "h100", "--size", "4096", "--family", "warptile"});
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_NE(r.err.find("gemmtune tune --sizes 4096"), std::string::npos) << r.err;
}

TEST_F(hostileCli, MessagesEscapeControlCharactersAndCutLongArguments) {
  auto esc = runCli({"ptx", "smem_bs\x1b[31mred"});
  EXPECT_EQ(esc.exitCode, 2);
  EXPECT_EQ(esc.err.find('\x1b'), std::string::npos) << esc.err;
  EXPECT_NE(esc.err.find("\\x1b"), std::string::npos) << esc.err;
  std::string huge(100000, 'x');
  for (std::vector<std::string> args : {std::vector<std::string>{"ptx", huge}, {"tune", "--sizes", "1" + huge},
                                        {"space", "--gpu", "h100", "--family", "smem", "--size", huge},
                                        {huge}}) {
    auto r = runCli(args);
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_LT(r.err.size(), 2000u) << r.err.substr(0, 200);
  }
}

// --- defect 7: leftovers ----------------------------------------------------------------------------

TEST_F(hostileCli, AFailedExportOrPtxLeavesNoPartialFile) {
  populate();
  CliConditions fullDisk;
  fullDisk.fileSizeLimit = 2048;
  auto out = dir / "out";
  std::filesystem::create_directory(out);
  auto e = runCliUnder({"export", "--db", db, (out / "export.json").string()}, fullDisk);
  EXPECT_EQ(e.exitCode, 74) << e.err;
  auto p = runCliUnder({"ptx", "smem_bs32", "--arch", "sm_90", "--no-cache", "-o", out.string()}, fullDisk);
  EXPECT_EQ(p.exitCode, 74) << p.err;
  EXPECT_TRUE(std::filesystem::is_empty(out));
}

TEST_F(hostileCli, AFailedBackupLeavesNothing) {
  populate();
  CliConditions fullDisk;
  // Room for the source's 32 KiB WAL index, not for the whole copy: the copy itself fails.
  fullDisk.fileSizeLimit = 40960;
  auto out = dir / "out";
  std::filesystem::create_directory(out);
  ASSERT_GT(std::filesystem::file_size(db), 40960u);
  auto r = runCliUnder({"db", "--db", db, "backup", (out / "copy.db").string()}, fullDisk);
  EXPECT_EQ(r.exitCode, 74) << r.err;
  EXPECT_NE(r.err.find("copying"), std::string::npos) << r.err;
  EXPECT_TRUE(std::filesystem::is_empty(out));
  auto ok = runCli({"db", "--db", db, "backup", (out / "copy.db").string()});
  EXPECT_EQ(ok.exitCode, 0) << ok.err;
  EXPECT_TRUE(onlyTheseFilesIn(out, {"copy.db"}));
}

// Interrupts `gemmtune ARGS` with SIGINT as soon as a file appears in `out`, as Ctrl-C during the
// write would; returns true when the process died of it.
bool interruptedWhileWriting(const std::vector<std::string>& args, const std::filesystem::path& out) {
  pid_t pid = ::fork();
  if (pid == 0) {
    int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, 1);
    ::dup2(devnull, 2);
    std::vector<char*> argv{const_cast<char*>(GEMMTUNE_CLI)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(GEMMTUNE_CLI, argv.data());
    std::_Exit(127);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::filesystem::is_empty(out) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  ::kill(pid, SIGINT);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGINT;
}

TEST_F(hostileCli, AnInterruptedExportOrBackupLeavesNothing) {
  {
    // One 64 MiB kernel makes both writes last long enough to be interrupted half-way.
    Database database(db, {OpenMode::ReadWrite, OpenCheck::Quick});
    SqliteStore store(database);
    auto big = test::okResult("smem_bs16", 4096, 4096, 4096, 9000);
    big.cubin.assign(64u << 20, 'c');
    store.recordResult(store.beginRun(test::testRun()), big);
  }
  auto out = dir / "out";
  std::filesystem::create_directory(out);
  EXPECT_TRUE(interruptedWhileWriting({"export", "--db", db, (out / "e.json").string()}, out));
  EXPECT_TRUE(std::filesystem::is_empty(out)) << std::filesystem::directory_iterator(out)->path();
  std::filesystem::remove_all(out);
  std::filesystem::create_directory(out);
  EXPECT_TRUE(interruptedWhileWriting({"db", "--db", db, "backup", (out / "copy.db").string()}, out));
  EXPECT_TRUE(std::filesystem::is_empty(out)) << std::filesystem::directory_iterator(out)->path();
}

TEST_F(hostileCli, ADeviceAsTheDatabaseIsRefusedWithoutAJournal) {
  auto file = writeJson("x.json", "{}");
  std::error_code ec;
  std::filesystem::remove("/dev/null-journal", ec);
  auto r = runCli({"import", "--db", "/dev/null", file});
  EXPECT_NE(r.exitCode, 0);
  auto doc = exported();
  auto imp = runCli({"import", "--db", "/dev/null", (dir / "export.json").string()});
  EXPECT_EQ(imp.exitCode, 74) << imp.err;
  EXPECT_FALSE(std::filesystem::exists("/dev/null-journal"));
}
