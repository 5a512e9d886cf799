// examples/slurm: the merge step run without Slurm, on exports like the array tasks write. Two
// shards' databases (one on another GPU) are exported, merge.sbatch imports both into one
// database, and that database holds every row of both, with a report.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "CliRunner.hpp"
#include "SqliteStore.hpp"
#include "db_test_support.hpp"

using namespace gemmtune;
using namespace gemmtune::db;
using gemmtune::test::runCli;

namespace {

int runScript(const std::string& script, const std::vector<std::string>& env) {
  std::string command;
  for (const auto& e : env) command += e + " ";
  command += "bash " + std::string(GEMMTUNE_SOURCE_DIR) + "/examples/slurm/" + script + " >/dev/null 2>&1";
  return std::system(command.c_str());
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
