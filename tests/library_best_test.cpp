// Library::best() on a fixture database, without a GPU: exact, nearest-size (guarded) and default
// answers; tampered rows (broken limits, impossible speeds) are skipped without a crash; a missing,
// empty or damaged database gives the default with one warning.
// Run: ctest -R libraryBest
#include <gtest/gtest.h>

#include "gemmtune/Library.hpp"
#include "library_test_support.hpp"

using namespace gemmtune;
using gemmtune::test::ScratchDir;

namespace {

struct LibraryBestFixture : ::testing::Test {
  ScratchDir dir;
  std::filesystem::path dbPath = dir / "tune.db";
  GpuSpec gpu = test::h100();

  db::ResultRecord row(const std::string& instance, long long m, long long n, long long k, double gflops) {
    return test::okResult(instance, m, n, k, gflops, gpu);
  }
  // Edits the stored rows as someone with the file could.
  void tamper(const std::string& sql) {
    db::Database database(dbPath, {db::OpenMode::ReadWrite, db::OpenCheck::Quick});
    database.exec(sql);
  }
};

}  // namespace

using libraryBest = LibraryBestFixture;

TEST_F(libraryBest, ExactMatchIsTheFastestRowAtThatSize) {
  test::writeDatabase(dbPath, gpu,
                      {row("blocktile1d_bm64_bn64_bk8_tm8", 4096, 4096, 4096, 17000),
                       row("smem_bs32", 4096, 4096, 4096, 9000),
                       row("blocktile1d_bm128_bn64_bk8_tm8", 4096, 2048, 1024, 21000)});
  Library lib(dbPath);
  Choice c = lib.best(gpu, 4096, 4096, 4096);
  EXPECT_EQ(c.match, Match::exact);
  EXPECT_EQ(c.instance, "blocktile1d_bm64_bn64_bk8_tm8");
  EXPECT_EQ(c.measuredSize, "4096");
  EXPECT_DOUBLE_EQ(c.measuredGflops, 17000);
  EXPECT_TRUE(c.note.empty());

  Choice rect = lib.best(gpu, 4096, 2048, 1024);
  EXPECT_EQ(rect.match, Match::exact);
  EXPECT_EQ(rect.measuredSize, "4096x2048x1024");
}

TEST_F(libraryBest, NearestSizeUsesTheGuardedFormWhenTheTilesDoNotDivide) {
  test::writeDatabase(dbPath, gpu, {row("blocktile1d_bm64_bn64_bk8_tm8", 1024, 1024, 1024, 15000)});
  Library lib(dbPath);
  Choice c = lib.best(gpu, 1000, 1000, 1000);
  EXPECT_EQ(c.match, Match::nearest_size);
  EXPECT_EQ(c.instance, "blocktile1d_bm64_bn64_bk8_tm8_guarded");
  EXPECT_EQ(c.measuredSize, "1024");
  EXPECT_DOUBLE_EQ(c.measuredGflops, 15000);
  EXPECT_NE(c.note.find("guarded"), std::string::npos) << c.note;
  EXPECT_NE(c.note.find("chosen for 1000 as the fastest predicted here"), std::string::npos) << c.note;

  Choice divisible = lib.best(gpu, 2048, 2048, 2048);
  EXPECT_EQ(divisible.match, Match::nearest_size);
  EXPECT_EQ(divisible.instance, "blocktile1d_bm64_bn64_bk8_tm8");
}

TEST_F(libraryBest, AGpuWithoutRowsGetsTheDefaultWithOneWarning) {
  test::writeDatabase(dbPath, gpu, {row("smem_bs32", 4096, 4096, 4096, 9000)});
  GpuSpec other = test::h100();
  other.name = "NVIDIA H100 PCIe";
  other.smCount = 114;
  test::WarningCapture capture;
  Library lib(dbPath);
  for (int i = 0; i < 5; ++i) {
    Choice c = lib.best(other, 4096, 4096, 4096 + i);
    EXPECT_EQ(c.match, Match::default_config);
    EXPECT_EQ(c.instance, "blocktile1d_bm64_bn64_bk8_tm8_guarded");
    EXPECT_TRUE(c.measuredSize.empty());
    EXPECT_EQ(c.measuredGflops, 0);
    EXPECT_NE(c.note.find("no valid tuned result for NVIDIA H100 PCIe"), std::string::npos) << c.note;
  }
  EXPECT_EQ(capture.warnings().size(), 1u) << capture.joined();
  EXPECT_EQ(lib.best(gpu, 4096, 4096, 4096).match, Match::exact);
}

TEST_F(libraryBest, TamperedRowsAreSkippedAndTheValidOneServed) {
  test::writeDatabase(dbPath, gpu,
                      {row("blocktile1d_bm64_bn128_bk8_tm8_guarded", 2000, 2000, 2000, 99000),
                       row("blocktile1d_bm128_bn64_bk8_tm8_guarded", 2000, 2000, 2000, 98000),
                       row("blocktile1d_bm32_bn64_bk8_tm8_guarded", 2000, 2000, 2000, 97000),
                       row("blocktile1d_bm64_bn64_bk8_tm8_guarded", 2000, 2000, 2000, 17000)});
  tamper(
      "UPDATE results SET threads_per_block = 4096 WHERE instance = 'blocktile1d_bm64_bn128_bk8_tm8_guarded';"
      "UPDATE results SET static_smem_bytes = 1000000 WHERE instance = 'blocktile1d_bm128_bn64_bk8_tm8_guarded';"
      "UPDATE results SET instance = 'warptile_bm128_bn128_guarded', family = 'warptile' "
      "  WHERE instance = 'blocktile1d_bm32_bn64_bk8_tm8_guarded';");
  Library lib(dbPath);
  Choice c = lib.best(gpu, 2000, 2000, 2000);
  EXPECT_EQ(c.match, Match::exact);
  EXPECT_EQ(c.instance, "blocktile1d_bm64_bn64_bk8_tm8_guarded");
  EXPECT_DOUBLE_EQ(c.measuredGflops, 17000);
}

// Faster than the GPU can run (H100: 1.1 × 66.9 TFLOP/s FP32 peak): a stored rate of 10⁹ GFLOP/s
// or a median time of a nanosecond is no measurement; each such row is skipped with one warning,
// however often it is met, and the fastest plausible row serves.
TEST_F(libraryBest, RowsFasterThanTheGpuCanRunAreSkippedWithOneWarningEach) {
  test::writeDatabase(dbPath, gpu,
                      {row("blocktile1d_bm64_bn128_bk8_tm8_guarded", 2000, 2000, 2000, 21000),
                       row("blocktile1d_bm128_bn64_bk8_tm8_guarded", 2000, 2000, 2000, 20000),
                       row("blocktile1d_bm64_bn64_bk8_tm8_guarded", 2000, 2000, 2000, 17000)});
  tamper(
      "UPDATE results SET gflops = 1e9 WHERE instance = 'blocktile1d_bm64_bn128_bk8_tm8_guarded';"
      "UPDATE results SET median_ms = 1e-6 WHERE instance = 'blocktile1d_bm128_bn64_bk8_tm8_guarded';");
  test::WarningCapture capture;
  Library lib(dbPath);
  for (int i = 0; i < 3; ++i) {
    Choice c = lib.best(gpu, 2000, 2000, 2000 + i);  // exact, then nearest sizes: the rows are met again
    EXPECT_EQ(c.instance, "blocktile1d_bm64_bn64_bk8_tm8_guarded") << c.note;
    EXPECT_DOUBLE_EQ(c.measuredGflops, 17000);
  }
  ASSERT_EQ(capture.warnings().size(), 2u) << capture.joined();
  const std::string said = capture.joined();
  EXPECT_NE(said.find("blocktile1d_bm64_bn128_bk8_tm8_guarded at 2000x2000x2000): implausible speed: 1e+09 GFLOP/s "
                      "stored, above the 73599 GFLOP/s that NVIDIA H100 80GB HBM3 can reach in strict FP32"),
            std::string::npos)
      << said;
  EXPECT_NE(said.find("from its median time of 1e-06 ms"), std::string::npos) << said;
}

TEST_F(libraryBest, OnlyTamperedRowsGiveTheDefault) {
  test::writeDatabase(dbPath, gpu, {row("blocktile1d_bm64_bn64_bk8_tm8", 1024, 1024, 1024, 15000)});
  tamper("UPDATE results SET instance = 'blocktile1d_bm256_bn256_bk8_tm1', threads_per_block = 65536;");
  Library lib(dbPath);
  Choice c = lib.best(gpu, 1024, 1024, 1024);
  EXPECT_EQ(c.match, Match::default_config);
  EXPECT_EQ(c.instance, "blocktile1d_bm64_bn64_bk8_tm8_guarded");
}

TEST_F(libraryBest, MissingDatabaseGivesTheDefaultWithOneWarning) {
  test::WarningCapture capture;
  Library lib(dir / "nowhere" / "tune.db");
  for (long long n : {1, 7, 1000, 4096}) {
    Choice c = lib.best(gpu, n, n, n);
    EXPECT_EQ(c.match, Match::default_config);
    EXPECT_NE(c.note.find("no tuning database at"), std::string::npos) << c.note;
  }
  ASSERT_EQ(capture.warnings().size(), 1u) << capture.joined();
  EXPECT_NE(capture.warnings()[0].find("blocktile1d_bm64_bn64_bk8_tm8_guarded"), std::string::npos);
}

TEST_F(libraryBest, EmptyDatabaseFileGivesTheDefault) {
  test::writeBytes(dbPath, "");
  test::WarningCapture capture;
  Library lib(dbPath);
  EXPECT_EQ(lib.best(gpu, 64, 64, 64).match, Match::default_config);
  EXPECT_EQ(capture.warnings().size(), 1u) << capture.joined();
}

TEST_F(libraryBest, ForeignFileGivesTheDefaultWithOneWarning) {
  test::writeBytes(dbPath, std::string(8192, 'x'));
  test::WarningCapture capture;
  Library lib(dbPath);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(lib.best(gpu, 512, 512, 512 + i).match, Match::default_config);
  EXPECT_EQ(capture.warnings().size(), 1u) << capture.joined();
}

TEST_F(libraryBest, DamagedPagesGiveTheDefaultWithOneWarning) {
  std::vector<db::ResultRecord> rows;
  for (int i = 0; i < 400; ++i) rows.push_back(row("smem_bs32_guarded", 1000 + i, 1000, 1000, 9000));
  test::writeDatabase(dbPath, gpu, rows);
  // Keep the header page, so the quick open succeeds; scramble everything after it.
  std::string bytes = test::readBytes(dbPath);
  ASSERT_GT(bytes.size(), 16384u);
  for (size_t i = 4096; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 131 + 7);
  test::writeBytes(dbPath, bytes);
  test::WarningCapture capture;
  Library lib(dbPath);
  for (int i = 0; i < 3; ++i) {
    Choice c = lib.best(gpu, 1000 + i, 1000, 1000);
    EXPECT_EQ(c.match, Match::default_config);
  }
  EXPECT_EQ(capture.warnings().size(), 1u) << capture.joined();
}

TEST_F(libraryBest, SizesBelowOneThrowInvalidArgument) {
  Library lib(dbPath);
  EXPECT_THROW(lib.best(gpu, 0, 1, 1), std::invalid_argument);
  EXPECT_THROW(lib.best(gpu, 1, -5, 1), std::invalid_argument);
  EXPECT_THROW(lib.best(gpu, 1, 1, 0), std::invalid_argument);
}

TEST(libraryBestNames, MatchAndStatusNames) {
  EXPECT_STREQ(toString(Match::exact), "exact");
  EXPECT_STREQ(toString(Match::nearest_size), "nearest_size");
  EXPECT_STREQ(toString(Match::default_config), "default");
  EXPECT_STREQ(toString(Status::ok), "ok");
  EXPECT_STREQ(toString(Status::invalid_argument), "invalid_argument");
  EXPECT_STREQ(toString(Status::no_gpu), "no_gpu");
  EXPECT_STREQ(toString(Status::launch_failed), "launch_failed");
}

// Layouts (issue 27): the default kernel reads the asked layout, a tuned nn row serves another
// layout as that layout's kernel, and the note of a row that only changed layout does not claim
// a guarded switch.
TEST_F(libraryBest, EveryLayoutGetsAKernelReadingThatLayout) {
  Library none(dir / "missing.db");
  const Choice fallback = none.best(gpu, Op::T, Op::N, 100, 100, 100);
  EXPECT_EQ(fallback.match, Match::default_config);
  EXPECT_EQ(fallback.instance, "blocktile1d_bm64_bn64_bk8_tm8_tn_guarded");

  test::writeDatabase(dbPath, gpu, {row("blocktile1d_bm64_bn64_bk8_tm8", 1024, 1024, 1024, 15000)});
  Library lib(dbPath);
  const Choice nt = lib.best(gpu, Op::N, Op::T, 1024, 1024, 1024, 8);
  EXPECT_EQ(nt.match, Match::nearest_size);
  EXPECT_EQ(nt.instance, "blocktile1d_bm64_bn64_bk8_tm8_nt");
  EXPECT_EQ(nt.measuredSize, "1024");
  EXPECT_EQ(nt.note.find("guarded form"), std::string::npos) << nt.note;
  EXPECT_NE(nt.note.find("measured as 1024"), std::string::npos) << nt.note;
}
