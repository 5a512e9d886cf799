// cuBLAS as a candidate, without a GPU: its rows (family cublas) are current without a template or
// a configuration, answer an exact lookup when they are the fastest valid row (never another size,
// layout or batch), are left out when the policy or Library::Options excludes cuBLAS, and make
// best() name cublas_<layout>.
// Run: ctest -R cublasRows
#include <gtest/gtest.h>

#include "Lookup.hpp"
#include "StaleRows.hpp"
#include "cublas_test_support.hpp"
#include "gemmtune/Library.hpp"
#include "library_test_support.hpp"

using namespace gemmtune;
using namespace gemmtune::db;
using namespace gemmtune::serving;
using gemmtune::test::ScratchDir;

namespace {

struct CublasRowsFixture : ::testing::Test {
  ScratchDir dir;
  std::filesystem::path dbPath = dir / "tune.db";
  GpuSpec gpu = test::h100();

  ResultRecord kernel(const std::string& instance, long long m, long long n, long long k, double gflops) {
    return test::okResult(instance, m, n, k, gflops, gpu);
  }
  ResultRecord cublas(const std::string& layout, long long m, long long n, long long k, double gflops,
                      long long batch = 1) {
    return test::cublasResult(layout, m, n, k, gflops, gpu, batch);
  }
  PresentEnvironment present() {
    PresentEnvironment p = serving::presentEnvironment();
    p.driverVersion = test::kDriver;
    return p;
  }
  StoredResult stored(const ResultRecord& record) {
    StoredResult r;
    static_cast<ResultRecord&>(r) = record;
    r.gpuName = gpu.name;
    return r;
  }
};

const std::string kBt = "blocktile1d_bm64_bn64_bk8_tm8";

}  // namespace

using cublasRows = CublasRowsFixture;

TEST_F(cublasRows, ACublasRowIsCurrentWithoutAConfigurationAndStaleWithTheDriver) {
  const CurrentFingerprints current{{gpu.name, gpuFingerprint(gpu)}};
  auto check = checkStoredRow(stored(cublas("nn", 4096, 4096, 4096, 50000)), present(), current);
  EXPECT_FALSE(check.config);
  EXPECT_TRUE(check.staleReasons.empty()) << fmt::format("{}", fmt::join(check.staleReasons, ", "));

  auto oldDriver = cublas("nn", 4096, 4096, 4096, 50000);
  oldDriver.key.driverVersion = 12080;
  EXPECT_EQ(checkStoredRow(stored(oldDriver), present(), current).staleReasons,
            std::vector<std::string>{"driver 12080 (now 13000)"});
  // A cuBLAS row must name its own layout: anything else is no row this build can place.
  auto misnamed = cublas("nn", 4096, 4096, 4096, 50000);
  misnamed.key.instance = "cublas_tn";
  EXPECT_EQ(checkStoredRow(stored(misnamed), present(), current).staleReasons,
            std::vector<std::string>{"unknown instance name"});
}

TEST_F(cublasRows, TheFastestExactRowWinsCublasOrNot) {
  test::writeDatabase(dbPath, gpu,
                      {kernel(kBt, 4096, 4096, 4096, 17000), cublas("nn", 4096, 4096, 4096, 50000),
                       kernel(kBt, 1024, 1024, 1024, 20000), cublas("nn", 1024, 1024, 1024, 15000)});
  Database database(dbPath, {OpenMode::ReadOnly, OpenCheck::Quick});
  SqliteStore store(database);
  Lookup lookup(store, present());
  auto r = lookup.best(gpu, {4096, 4096, 4096});
  EXPECT_EQ(r.quality, MatchQuality::exact);
  EXPECT_TRUE(r.cublas);
  EXPECT_FALSE(r.config);
  EXPECT_EQ(r.instance, "cublas_nn");
  EXPECT_DOUBLE_EQ(r.gflops, 50000);
  EXPECT_TRUE(r.cubin.empty());
  auto ours = lookup.best(gpu, {1024, 1024, 1024});  // our kernel measured faster there
  EXPECT_FALSE(ours.cublas);
  EXPECT_EQ(ours.instance, kBt);
  // The family argument: cuBLAS's row alone, or a kernel family's rows alone.
  EXPECT_EQ(lookup.best(gpu, {1024, 1024, 1024}, "cublas").instance, "cublas_nn");
  EXPECT_EQ(lookup.best(gpu, {4096, 4096, 4096}, "blocktile1d").instance, kBt);
  // Carried to another size only through the model: cuBLAS's row there predicts it faster than
  // the kernel by more than the margin, and the answer says so.
  auto nearest = lookup.best(gpu, {4000, 4000, 4000});
  EXPECT_EQ(nearest.quality, MatchQuality::nearest_size);
  EXPECT_TRUE(nearest.cublas);
  EXPECT_NE(nearest.reason.find("cuBLAS predicted"), std::string::npos) << nearest.reason;
  EXPECT_EQ(lookup.best(gpu, {4000, 4000, 4000}, "cublas").quality, MatchQuality::none);
}

TEST_F(cublasRows, APolicyWithoutCublasAnswersWithTheFastestKernel) {
  test::writeDatabase(dbPath, gpu, {kernel(kBt, 4096, 4096, 4096, 17000), cublas("nn", 4096, 4096, 4096, 50000)});
  Database database(dbPath, {OpenMode::ReadOnly, OpenCheck::Quick});
  SqliteStore store(database);
  Lookup lookup(store, present(), LookupPolicy{false});
  auto r = lookup.best(gpu, {4096, 4096, 4096});
  EXPECT_EQ(r.quality, MatchQuality::exact);
  EXPECT_FALSE(r.cublas);
  EXPECT_EQ(r.instance, kBt);
}

TEST_F(cublasRows, ACublasRowServesOnlyItsOwnLayoutAndBatch) {
  // tn and batch 8 have cuBLAS rows of their own only where measured; nn's row serves neither.
  test::writeDatabase(dbPath, gpu,
                      {kernel(kBt, 512, 512, 512, 9000), cublas("nn", 512, 512, 512, 30000),
                       cublas("tn", 512, 512, 512, 28000)});
  Database database(dbPath, {OpenMode::ReadOnly, OpenCheck::Quick});
  SqliteStore store(database);
  Lookup lookup(store, present());
  auto tn = lookup.best(gpu, {512, 512, 512, "tn"});
  EXPECT_EQ(tn.quality, MatchQuality::exact);
  EXPECT_EQ(tn.instance, "cublas_tn");
  auto batched = lookup.best(gpu, {512, 512, 512, "nn", "any", 8});  // from nn's rows: a kernel
  EXPECT_EQ(batched.quality, MatchQuality::nearest_size);
  EXPECT_FALSE(batched.cublas);
  EXPECT_EQ(batched.instance, kBt);
}

TEST_F(cublasRows, AnImplausiblyFastCublasRowIsSkipped) {
  test::writeDatabase(dbPath, gpu, {kernel(kBt, 4096, 4096, 4096, 17000), cublas("nn", 4096, 4096, 4096, 5e6)});
  Database database(dbPath, {OpenMode::ReadOnly, OpenCheck::Quick});
  SqliteStore store(database);
  Lookup lookup(store, present());
  EXPECT_EQ(lookup.best(gpu, {4096, 4096, 4096}).instance, kBt);
}

TEST_F(cublasRows, BestNamesCublasWhereItWasMeasuredFastestUnlessOptionsExcludeIt) {
  test::writeDatabase(dbPath, gpu,
                      {kernel(kBt, 4096, 4096, 4096, 17000), cublas("nn", 4096, 4096, 4096, 50000),
                       cublas("nt", 4096, 4096, 4096, 48000)});
  Library lib(Library::Options{{dbPath.string()}});
  Choice c = lib.best(gpu, 4096, 4096, 4096);
  EXPECT_EQ(c.match, Match::exact);
  EXPECT_EQ(c.instance, "cublas_nn");
  EXPECT_DOUBLE_EQ(c.measuredGflops, 50000);
  EXPECT_NE(c.note.find("cuBLAS was measured fastest"), std::string::npos) << c.note;
  EXPECT_EQ(lib.best(gpu, Op::N, Op::T, 4096, 4096, 4096).instance, "cublas_nt");

  Library kernelsOnly(Library::Options{{dbPath.string()}, false});
  Choice k = kernelsOnly.best(gpu, 4096, 4096, 4096);
  EXPECT_EQ(k.match, Match::exact);
  EXPECT_EQ(k.instance, kBt);
  // nt has only cuBLAS's row: without cuBLAS, nn's kernel serves it.
  EXPECT_EQ(kernelsOnly.best(gpu, Op::N, Op::T, 4096, 4096, 4096).match, Match::nearest_size);
}

// A cuBLASLt configuration's row (cublas_<layout>_<algo>) is a cuBLAS row: current, served at its
// exact size when fastest, its instance naming the configuration the library runs. It predicts
// nothing elsewhere: at another size cuBLAS's own call runs, predicted from cuBLAS's own row.
TEST_F(cublasRows, ACublasLtConfigurationsRowIsServedAtItsSizeByItsName) {
  auto lt = cublas("nt", 1024, 1024, 1024, 38000);
  lt.key.instance = "cublas_nt_lt55_t19_k4_r2_w1_s31_c0_i0_g0";
  lt.key.compileOptions = "CUBLAS_COMPUTE_32F";
  const CurrentFingerprints current{{gpu.name, gpuFingerprint(gpu)}};
  EXPECT_TRUE(checkStoredRow(stored(lt), present(), current).staleReasons.empty());
  EXPECT_TRUE(isCublasRow(lt));
  auto otherLayout = lt;
  otherLayout.key.problem.layout = "nn";
  EXPECT_FALSE(isCublasRow(otherLayout));
  EXPECT_EQ(cublasLtAlgoOf(lt.instance(), "nt"), "lt55_t19_k4_r2_w1_s31_c0_i0_g0");
  EXPECT_EQ(cublasLtAlgoOf(lt.instance(), "nn"), "");
  EXPECT_EQ(cublasLtAlgoOf("cublas_nt", "nt"), "");  // cuBLAS's own call
  EXPECT_EQ(cublasLtAlgoOf("cublas_nt_x", "nt"), "");
  EXPECT_EQ(cublasLtAlgoOf("smem_nt_lt55", "nt"), "");

  test::writeDatabase(dbPath, gpu,
                      {kernel(kBt, 1024, 1024, 1024, 30000), cublas("nt", 1024, 1024, 1024, 34000), lt,
                       kernel(kBt, 2048, 2048, 2048, 30000), cublas("nt", 2048, 2048, 2048, 47000)});
  Database database(dbPath, {OpenMode::ReadOnly, OpenCheck::Quick});
  SqliteStore store(database);
  Lookup lookup(store, present());
  auto r = lookup.best(gpu, {1024, 1024, 1024, "nt"});
  EXPECT_EQ(r.quality, MatchQuality::exact);
  EXPECT_TRUE(r.cublas);
  EXPECT_EQ(r.instance, lt.key.instance);
  auto nearest = lookup.best(gpu, {1100, 1100, 1100, "nt"});
  EXPECT_EQ(nearest.quality, MatchQuality::nearest_size);
  ASSERT_TRUE(nearest.cublas) << nearest.reason;
  EXPECT_EQ(nearest.instance, "cublas_nt");
  EXPECT_NEAR(nearest.gflops, 34000, 1) << "predicted from the cuBLASLt row: " << nearest.reason;
}
