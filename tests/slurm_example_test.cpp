// examples/slurm: the merge step run without Slurm, on exports like the array tasks write. Two
// shards' databases (one on another GPU) are exported, merge.sbatch imports both into one
// database, and that database holds every row of both, with a report.
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "CliRunner.hpp"
#include "SqliteStore.hpp"
#include "db_test_support.hpp"
#include "pg_server.hpp"

using namespace gemmtune;
using namespace gemmtune::db;
using gemmtune::test::runCli;

namespace {

std::string scriptCommand(const std::string& script, const std::vector<std::string>& env) {
  std::string command = "env ";
  for (const auto& e : env) command += "'" + e + "' ";
  return command + "bash " + std::string(GEMMTUNE_SOURCE_DIR) + "/examples/slurm/" + script;
}

int runScript(const std::string& script, const std::vector<std::string>& env) {
  return std::system((scriptCommand(script, env) + " >/dev/null 2>&1").c_str());
}

}  // namespace

TEST(SlurmExample, MergeImportsEveryShardsExport) {
  test::ScratchDir dir;
  const auto shared = dir.path() / "shared";
  std::filesystem::create_directories(shared);
  for (int task : {0, 1}) {
    const auto local = dir.path() / ("shard-" + std::to_string(task) + ".db");
    {
      Database database(local, {OpenMode::ReadWrite, OpenCheck::Quick});
      SqliteStore store(database);
      if (task == 0) {
        test::recordTwoOkRows(store);
      } else {
        auto run = store.beginRun(test::testRun(test::testGpu(108)));
        store.recordResult(run, test::okResult("smem_bs16", 1024, 1024, 1024, 5000, test::testGpu(108)));
      }
    }
    auto exported = runCli({"export", "--db", local.string(), (shared / ("results-" + std::to_string(task) + ".json")).string()});
    ASSERT_EQ(exported.exitCode, 0) << exported.err;
  }
  ASSERT_EQ(runScript("merge.sbatch", {"GEMMTUNE=" + std::string(GEMMTUNE_CLI), "SHARED=" + shared.string()}), 0);
  auto merged = runCli({"results", "--db", (shared / "tune.db").string(), "--csv"});
  ASSERT_EQ(merged.exitCode, 0) << merged.err;
  for (const char* instance : {"blocktile1d_bm64_bn64_bk8_tm8", "smem_bs32", "smem_bs16"})
    EXPECT_NE(merged.out.find(instance), std::string::npos) << instance << " missing:\n" << merged.out;
  EXPECT_TRUE(std::filesystem::exists(shared / "report.html"));
  // Merging again changes nothing: the later measurement wins, ties keep the stored row.
  ASSERT_EQ(runScript("merge.sbatch", {"GEMMTUNE=" + std::string(GEMMTUNE_CLI), "SHARED=" + shared.string()}), 0);
  EXPECT_EQ(runCli({"results", "--db", (shared / "tune.db").string(), "--csv"}).out, merged.out);
}

TEST(SlurmExample, ArrayTaskNeedsItsArrayVariables) {
  // Outside an array the task script stops at once with what to do (no tune, no files).
  test::ScratchDir dir;
  EXPECT_NE(runScript("tune-array.sbatch", {"GEMMTUNE=" + std::string(GEMMTUNE_CLI), "SHARED=" + dir.path().string()}), 0);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

// The whole example against a real PostgreSQL server, without Slurm or a GPU: three array tasks
// run at once as local processes, each tuning its shard on a simulated GPU straight into the
// shared store; merge.sbatch snapshots the store and reports. The store then holds exactly what
// one unsharded run of the same sweep stores, each row once.
TEST(SlurmExample, ArrayTasksWriteOneSharedPostgresqlStore) {
  if (auto why = test::PgServer::unavailableReason(); !why.empty()) GTEST_SKIP() << why;
  test::PgServer server;
  test::ScratchDir dir;
  const std::string store = server.createDatabase("slurm_sweep"), alone = server.createDatabase("slurm_alone");
  const std::vector<std::string> common{
      "GEMMTUNE=" + std::string(GEMMTUNE_CLI), "SIZES=256,512", "FAMILIES=smem,blocktile2d",
      "GEMMTUNE_SIMULATED_GPU=h100", "GEMMTUNE_SIMULATED_WORKER=" + std::string(GEMMTUNE_FAKE_WORKER) + " table " + dir.path().string(),
      "XDG_CACHE_HOME=" + (dir.path() / "cache").string()};
  // Compile once first, so the three tasks do not all compile the same kernels on two cores.
  auto env = common;
  env.insert(env.end(), {"SLURM_ARRAY_TASK_ID=0", "SLURM_ARRAY_TASK_COUNT=1", "STORE=" + alone, "SHARED=" + (dir.path() / "alone").string()});
  ASSERT_EQ(runScript("tune-array.sbatch", env), 0);

  std::string parallel;
  for (int task = 0; task < 3; ++task) {
    auto e = common;
    e.insert(e.end(), {"SLURM_ARRAY_TASK_ID=" + std::to_string(task), "SLURM_ARRAY_TASK_COUNT=3", "STORE=" + store,
                       "SHARED=" + (dir.path() / "shared").string()});
    parallel += scriptCommand("tune-array.sbatch", e) + " >/dev/null 2>&1 & ";
  }
  ASSERT_EQ(std::system((parallel + "wait").c_str()), 0);
  // "instance size status" per row; `withStatus` false: "instance size" (a shard that starts a
  // family at 512 has no ranking from 256 and times all of it, so statuses may differ).
  auto rows = [](const std::string& location, bool withStatus = true) {
    auto r = runCli({"results", "--db", location, "--json"});
    EXPECT_EQ(r.exitCode, 0) << r.err;
    std::multiset<std::string> out;
    for (const auto& row : nlohmann::json::parse(r.out))
      out.insert(row.at("instance").get<std::string>() + " " + std::to_string(row.at("m").get<long long>()) +
                 (withStatus ? " " + row.at("status").get<std::string>() : ""));
    return out;
  };
  const auto expected = rows(alone, false);
  EXPECT_GT(expected.size(), 20u);
  EXPECT_EQ(rows(store, false), expected);  // every unit once, nothing twice

  auto merge = common;
  merge.insert(merge.end(), {"STORE=" + store, "SHARED=" + (dir.path() / "shared").string()});
  ASSERT_EQ(runScript("merge.sbatch", merge), 0);
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "shared" / "report.html"));
  std::multiset<std::string> okRows;  // a snapshot keeps the ok rows ("ok", "ok:retimed")
  for (const auto& row : rows(store))
    if (row.ends_with(" ok") || row.find(" ok:") != std::string::npos) okRows.insert(row);
  EXPECT_EQ(rows((dir.path() / "shared" / "tune.db").string()), okRows);
}
