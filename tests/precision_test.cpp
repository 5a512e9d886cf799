// Precision classes (gemmtune/Precision.hpp), without a GPU: the faithful class's speed bound, that a
// strict caller is never served a tensor-core family's row however fast it is (exact or nearest,
// through the lookup and through Library), that a faithful caller is, and the tf32x3 family's plan
// (4-float accesses unguarded, any problem guarded).
// Run: ctest -R precision
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "FamilyRegistry.hpp"
#include "Lookup.hpp"
#include "PresentEnvironment.hpp"
#include "SpeedBound.hpp"
#include "gemmtune/Library.hpp"
#include "library_test_support.hpp"

using namespace gemmtune;
using gemmtune::test::ScratchDir;

namespace {

constexpr const char* kTensor = "tf32x3_bm128_bn64_bk16_wm64_wn32_st3_sw4_sk1";
constexpr const char* kSimt = "cutlass_bm128_bn128_bk8_wm64_wn32_st3_sw4_sk1";

struct PrecisionFixture : ::testing::Test {
  ScratchDir dir;
  std::filesystem::path dbPath = dir / "tune.db";
  GpuSpec gpu = test::h100();
  // The tensor-core kernel twice as fast as the SIMT one at 4096³.
  void write() {
    test::writeDatabase(dbPath, gpu,
                        {test::okResult(kTensor, 4096, 4096, 4096, 100000, gpu),
                         test::okResult(kSimt, 4096, 4096, 4096, 50000, gpu)});
  }
  std::string best(PrecisionClass precision, long long size) {
    db::Database database(dbPath, {db::OpenMode::ReadOnly, db::OpenCheck::Quick});
    db::SqliteStore store(database);
    serving::PresentEnvironment present = serving::presentEnvironment();
    present.driverVersion = test::kDriver;
    serving::LookupPolicy policy;
    policy.cublas = false;
    policy.precision = precision;
    serving::Lookup lookup(store, present, policy);
    return lookup.best(gpu, db::ProblemKey{size, size, size}).measuredInstance;
  }
};

}  // namespace

using precision = PrecisionFixture;

// FP16 products (fp16x3, wgmmafp16x3) run at twice TF32's rate: the bound is a third of FP16's.
// wgmmafp16x3 was timed at 145 TFLOP/s at 8192 in a tuning run on an H100, 80 % of a third of the
// TF32 rate that bounded the class before.
TEST(precisionBound, FaithfulIsAThirdOfTheTensorCoresFp16Rate) {
  const GpuSpec h100 = test::h100();  // 132 SMs, 1980 MHz, sm_90
  const auto peak = serving::peakRate(h100, PrecisionClass::faithful);
  ASSERT_TRUE(peak);
  EXPECT_NEAR(peak->gflops, 132 * 4096 / 3.0 * 1.98, 1e-6);  // 356 835 GFLOP/s
  EXPECT_EQ(peak->formula, "132 SMs × 4096 FP16 FLOP / 3 products × 1980 MHz");
  EXPECT_EQ(serving::tf32FlopsPerSmClock(8, 0), 1024);
  EXPECT_EQ(serving::tf32FlopsPerSmClock(8, 6), 256);
  EXPECT_EQ(serving::tf32FlopsPerSmClock(7, 0), 0);  // no TF32: no bound
  // 100 TFLOP/s is no SIMT measurement on an H100, and a plausible 3xTF32 one.
  db::StoredResult row;
  static_cast<db::ResultRecord&>(row) = test::okResult(kTensor, 4096, 4096, 4096, 100000, h100);
  EXPECT_TRUE(serving::implausibleSpeed(row, h100, PrecisionClass::strict));
  EXPECT_FALSE(serving::implausibleSpeed(row, h100, PrecisionClass::faithful));
  // 200 TFLOP/s: above a third of the TF32 rate (the bound before), within a third of FP16's.
  static_cast<db::ResultRecord&>(row) = test::okResult(kTensor, 4096, 4096, 4096, 200000, h100);
  EXPECT_FALSE(serving::implausibleSpeed(row, h100, PrecisionClass::faithful));
  EXPECT_EQ(serving::precisionClassOf(FamilyRegistry::builtin().get("tf32x3")), PrecisionClass::faithful);
  EXPECT_EQ(serving::precisionClassOf(FamilyRegistry::builtin().get("cutlass")), PrecisionClass::strict);
}

TEST(precisionNames, NamesReadInAnyCaseAndNothingElse) {
  EXPECT_STREQ(precisionName(PrecisionClass::faithful), "faithful");
  EXPECT_EQ(precisionNamed("Strict"), PrecisionClass::strict);
  EXPECT_EQ(precisionNamed("FAITHFUL"), PrecisionClass::faithful);
  EXPECT_EQ(precisionNamed("faithfu"), std::nullopt);
  EXPECT_EQ(precisionNamed(""), std::nullopt);
}

TEST_F(precision, StrictNeverServesATensorCoreRowExactOrNearest) {
  write();
  EXPECT_EQ(best(PrecisionClass::strict, 4096), kSimt);
  EXPECT_EQ(best(PrecisionClass::strict, 3000), kSimt);  // nearest size: the model weighs SIMT rows only
  EXPECT_EQ(best(PrecisionClass::faithful, 4096), kTensor);
}

// A tensor-core row is accepted per problem (its error against cuBLAS SGEMM's was verified there,
// and at a shorter K three TF32 products can be less accurate): a faithful caller at another size
// gets the SIMT row, however fast the tensor-core one.
TEST_F(precision, FaithfulRowsServeOnlyTheirOwnProblem) {
  write();
  EXPECT_EQ(best(PrecisionClass::faithful, 3000), kSimt);
  EXPECT_EQ(best(PrecisionClass::faithful, 8192), kSimt);
}

TEST_F(precision, LibraryServesTensorCoresOnlyWhenItsOptionsAllowIt) {
  write();
  Library::Options strict{{dbPath.string()}};
  strict.cublas = false;
  strict.recordSeen = false;
  EXPECT_EQ(Library(strict).best(gpu, 4096, 4096, 4096).instance, kSimt);
  Library::Options faithful = strict;
  faithful.precision = PrecisionClass::faithful;
  EXPECT_EQ(Library(faithful).best(gpu, 4096, 4096, 4096).instance, kTensor);
}

TEST(precisionPlan, Tf32x3ReadsFourFloatsUnguardedAndAnythingGuarded) {
  const Config c = FamilyRegistry::builtin().parseName(kTensor);
  EXPECT_TRUE(planLaunch(c, GemmProblem::packed(4096, 4096, 4096)).runnable());
  GemmProblem oddK = GemmProblem::packed(4096, 4096, 4095);  // A's rows (K floats) are not whole vectors
  EXPECT_NE(planLaunch(c, oddK).refusal.find("multiples of 4"), std::string::npos) << planLaunch(c, oddK).refusal;
  GemmProblem padded = GemmProblem::packed(4096, 4096, 4096);
  padded.ldb = 4098;
  EXPECT_NE(planLaunch(c, padded).refusal.find("lda, ldb and ldc multiples of 4"), std::string::npos);
  // Leading dimensions of whole vectors, but A's rows (K floats) not: CUTLASS would predicate a
  // vector that straddles the row's end.
  GemmProblem shortRows = GemmProblem::packed(4096, 4096, 4094);
  shortRows.lda = 4096;
  EXPECT_NE(planLaunch(c, shortRows).refusal.find("stored rows of A and B and C's row (4094, 4096, 4096)"),
            std::string::npos)
      << planLaunch(c, shortRows).refusal;
  GemmProblem shifted = GemmProblem::packed(4096, 4096, 4096);
  shifted.alignA = 4;
  EXPECT_NE(planLaunch(c, shifted).refusal.find("16-byte aligned"), std::string::npos);
  for (const GemmProblem& p : {oddK, padded, shortRows, shifted}) {
    EXPECT_TRUE(formFor(c, p).guarded);
    EXPECT_TRUE(planLaunch(formFor(c, p), p).runnable()) << p.text();
  }
}

// Found in review: the lookup read a size's fastest rows and the nearest measured sizes before
// leaving out the classes the caller does not allow, so tensor-core rows (the fastest, and the only
// ones at many sizes) crowded out the SIMT rows a strict caller can run.
TEST_F(precision, TensorCoreRowsDoNotCrowdOutAStrictCallersRows) {
  std::vector<db::ResultRecord> rows;
  for (int i = 0; i < 40; ++i) rows.push_back(test::okResult(kTensor, 2600 + 16 * i, 2600 + 16 * i, 2600 + 16 * i, 90000, gpu));
  for (int i = 0; i < 20; ++i)
    rows.push_back(test::okResult(fmt::format("tf32x3_bm64_bn64_bk{}_wm32_wn32_st{}_sw4_sk1", 16 << (i % 2), 3 + i % 2),
                                  8192, 8192, 8192, 80000 + i, gpu));
  rows.push_back(test::okResult(kSimt, 8192, 8192, 8192, 50000, gpu));
  test::writeDatabase(dbPath, gpu, rows);
  EXPECT_EQ(best(PrecisionClass::strict, 3000), kSimt);
  EXPECT_EQ(best(PrecisionClass::strict, 8192), kSimt);
}

TEST(precisionPlan, Tf32x3VectorRulesFollowEveryLayout) {
  const Config nn = FamilyRegistry::builtin().parseName(kTensor);
  auto plan = [&](const char* layout, long long m, long long n, long long k) {
    Config c = nn;
    c.layout = *Layout::parse(layout);
    GemmProblem p = GemmProblem::packed(GemmShape{m, n, k, c.layout, 1});
    return planLaunch(c, p);
  };
  EXPECT_TRUE(plan("tn", 4096, 4096, 4095).runnable());   // A stored K x M: its rows are M long
  EXPECT_FALSE(plan("tn", 4095, 4096, 4096).runnable());  // ... so M must be a multiple of 4
  EXPECT_FALSE(plan("nt", 4096, 4095, 4096).runnable());  // C's rows are N long
  EXPECT_FALSE(plan("nt", 4096, 4096, 4095).runnable());  // B stored N x K: its rows are K long
  GemmProblem strided = GemmProblem::packed(GemmShape{64, 64, 64, {}, 4});
  strided.strideA = 64 * 64 + 2;
  strided.alignA = 8;  // the base's and the stride's common alignment
  EXPECT_FALSE(planLaunch(nn, strided).runnable());
  EXPECT_TRUE(planLaunch(formFor(nn, strided), strided).runnable());
}
