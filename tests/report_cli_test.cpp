// `gemmtune report` as a user runs it: the page is written, a missing database or an unwritable
// output path gives the documented exit code.
// Run: ctest -R reportCli
#include "CliRunner.hpp"
#include "report_test_support.hpp"

using namespace gemmtune;
using gemmtune::test::runCli;

struct reportCli : test::ScratchDbTest {
  std::string out = (dir / "report.html").string();
};

TEST_F(reportCli, WritesThePage) {
  test::writeReportFixture(db);
  auto r = runCli({"report", "--db", db, "-o", out});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::string page = test::readBytes(out);
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(test::xmlProblem(page), "");
  EXPECT_NE(r.err.find("wrote " + out), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("2 stale excluded"), std::string::npos) << r.err;
  for (const auto& e : std::filesystem::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().string().find(".tmp"), std::string::npos) << "left behind: " << e.path();
}

TEST_F(reportCli, ChoosesFamilyAndSizeAndWritesToStdout) {
  test::writeReportFixture(db);
  auto r = runCli({"report", "--db", db, "--gpu", "h100", "--family", "smem", "--size", "2048", "-o", "-"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("Parameter space of smem"), std::string::npos);
  EXPECT_NE(r.out.find("smem at 2048: BLOCKSIZE"), std::string::npos);
  auto missing = runCli({"report", "--db", db, "--size", "999", "-o", out});
  EXPECT_EQ(missing.exitCode, 1);
  EXPECT_NE(missing.err.find("no current results at size 999"), std::string::npos) << missing.err;
  EXPECT_EQ(runCli({"report", "--db", db, "--family", "nosuch", "-o", out}).exitCode, 2);
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST_F(reportCli, NoDatabaseSaysToTuneFirst) {
  auto r = runCli({"report", "--db", db, "-o", out});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.err.find("run `gemmtune tune` first"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_FALSE(std::filesystem::exists(db));
  auto env = runCli({"report", "-o", out}, {"GEMMTUNE_DB=" + db});
  EXPECT_EQ(env.exitCode, 1);
}

TEST_F(reportCli, UnwritableOutputIsAnIoError) {
  test::writeReportFixture(db);
  auto r = runCli({"report", "--db", db, "-o", (dir / "no-such-dir" / "report.html").string()});
  EXPECT_EQ(r.exitCode, 74) << r.err;
  EXPECT_NE(r.err.find("cannot write the report"), std::string::npos) << r.err;
  auto toDir = runCli({"report", "--db", db, "-o", dir.path().string()});
  EXPECT_EQ(toDir.exitCode, 74) << toDir.err;
}

TEST_F(reportCli, OutputIsRequired) {
  auto r = runCli({"report", "--db", db});
  EXPECT_EQ(r.exitCode, 2);
}
