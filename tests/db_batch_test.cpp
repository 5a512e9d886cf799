// Layout and batch in the results store (issue 27 item 3): a single product's cache key hashes as
// it did before batches existed (stored rows stay current); layout and batch are validated, part
// of every row, baseline, filter and order; a batched call's GFLOP/s count every product.
// Run: ctest -R dbBatch
#include <functional>

#include "Database.hpp"
#include "SqliteStore.hpp"
#include "db_test_support.hpp"

using namespace gemmtune;
using namespace gemmtune::db;

namespace {

struct BatchFixture : ::testing::Test {
  test::ScratchDir dir;
  Database db{dir / "tune.db", {OpenMode::ReadWrite, OpenCheck::Quick}};
  SqliteStore store{db};
  std::int64_t run = store.beginRun(test::testRun());
};

ResultRecord at(const std::string& layout, long long batch, double gflops, long long size = 512) {
  ResultRecord r = test::okResult("smem_bs32", size, size, size, gflops);
  r.key.problem.layout = layout;
  r.key.problem.batch = batch;
  return r;
}

BaselineRecord baseline(long long batch, double medianMs) {
  BaselineRecord b = test::cublasBaseline(512, medianMs, "13.0");
  b.problem.batch = batch;
  return b;
}

std::string refusal(const std::function<void()>& f) {
  try {
    f();
  } catch (const DataError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST(dbBatchKey, ASingleProductHashesAsBeforeBatches) {
  CacheKey k;
  k.gpuFingerprint = "fp";
  k.driverVersion = 13000;
  k.nvrtcVersion = "13.0";
  k.arch = "sm_90";
  k.compileOptions = "-O3";
  k.sourceHash = "abc";
  k.methodVersion = "tune1.time1.verify1";
  k.instance = "smem_bs32";
  k.problem = {4096, 1024, 512};
  // sha256 of ["cache-key-v1","fp",13000,"13.0","sm_90","-O3","abc","tune1.time1.verify1","smem_bs32",4096,1024,512,
  // "nn","any"]: what every key stored before batches existed was.
  EXPECT_EQ(k.hash(), "dac36b5157dc0a5bd24f4fc3291d9ece9b6d83697857471a51b926014ec69c74");
  CacheKey batched = k;
  batched.problem.batch = 64;
  EXPECT_NE(batched.hash(), k.hash());
  CacheKey other = batched;
  other.problem.batch = 65;
  EXPECT_NE(other.hash(), batched.hash());
  CacheKey transposed = k;
  transposed.problem.layout = "tn";
  EXPECT_NE(transposed.hash(), k.hash());
  EXPECT_EQ(layoutAndBatchSuffix(k.problem), "");
  EXPECT_EQ(layoutAndBatchSuffix(batched.problem), " batch 64");
  EXPECT_EQ(layoutAndBatchSuffix(ProblemKey{8, 8, 8, "tn", "any", 2}), " tn batch 2");
}

TEST(dbBatchKey, LayoutAndBatchAreValidated) {
  for (const char* layout : {"nn", "nt", "tn", "tt"}) EXPECT_EQ(problemKeyProblem({8, 8, 8, layout}), "") << layout;
  EXPECT_EQ(problemKeyProblem({8, 8, 8, "xn"}), "layout 'xn' is not one of nn, nt, tn, tt");
  EXPECT_EQ(problemKeyProblem({8, 8, 8, "NN"}), "layout 'NN' is not one of nn, nt, tn, tt");
  EXPECT_EQ(problemKeyProblem({8, 8, 8, ""}), "layout '' is not one of nn, nt, tn, tt");
  EXPECT_EQ(problemKeyProblem({8, 8, 8, "nn", "any", 0}), "batch 0 is not positive");
  EXPECT_EQ(problemKeyProblem({8, 8, 8, "nn", "any", -3}), "batch -3 is not positive");
  EXPECT_EQ(problemKeyProblem({8, 0, 8}), "problem size 8x0x8 is not positive");
  EXPECT_EQ(problemKeyProblem({8, 8, 8, "nn", ""}), "the beta class must be named");
}

using dbBatch = BatchFixture;

TEST_F(dbBatch, BadLayoutsAndBatchesAreRefusedAndNothingIsWritten) {
  EXPECT_NE(refusal([&] { store.recordResult(run, at("nx", 1, 100)); }).find("layout 'nx' is not one of nn"),
            std::string::npos);
  EXPECT_NE(refusal([&] { store.recordResult(run, at("nn", 0, 100)); }).find("result for 'smem_bs32': batch 0"),
            std::string::npos);
  auto bad = baseline(1, 1.0);
  bad.problem.layout = "TN";
  EXPECT_NE(refusal([&] { store.recordBaseline(run, bad); }).find("baseline cublas 512x512x512: layout 'TN'"),
            std::string::npos);
  EXPECT_NE(refusal([&] { store.recordBaseline(run, baseline(-1, 1.0)); }).find("batch -1 is not positive"),
            std::string::npos);
  EXPECT_EQ(db.queryInt("SELECT (SELECT count(*) FROM results) + (SELECT count(*) FROM baselines)"), 0);
}

TEST_F(dbBatch, EveryRowKeepsItsLayoutAndBatchAndFiltersSelectThem) {
  // One configuration at one size, measured as four different problems: four rows.
  ASSERT_TRUE(store.recordResult(run, at("tn", 1, 300)));
  ASSERT_TRUE(store.recordResult(run, at("nn", 64, 200)));
  ASSERT_TRUE(store.recordResult(run, at("nn", 1, 100)));
  ASSERT_TRUE(store.recordResult(run, at("nn", 8, 150)));
  auto rows = store.results({});
  ASSERT_EQ(rows.size(), 4u);
  // Ordered by size, then layout, then batch.
  std::vector<std::pair<std::string, long long>> order;
  for (const auto& r : rows) {
    order.emplace_back(r.key.problem.layout, r.key.problem.batch);
    EXPECT_EQ(r.cacheKeyHash, r.key.hash());
  }
  EXPECT_EQ(order, (std::vector<std::pair<std::string, long long>>{{"nn", 1}, {"nn", 8}, {"nn", 64}, {"tn", 1}}));

  ResultFilter batched;
  batched.batch = 64;
  ASSERT_EQ(store.results(batched).size(), 1u);
  EXPECT_EQ(store.results(batched)[0].key.problem, (ProblemKey{512, 512, 512, "nn", "any", 64}));
  ResultFilter tn;
  tn.layout = "tn";
  tn.batch = 1;
  ASSERT_EQ(store.results(tn).size(), 1u);
  EXPECT_EQ(store.results(tn)[0].gflops, 300);
  ResultFilter nn;
  nn.layout = "nn";
  EXPECT_EQ(store.results(nn).size(), 3u);
  EXPECT_EQ(store.measuredSizes({}).size(), 4u);
  EXPECT_EQ(store.measuredSizes(batched), (std::vector<ProblemKey>{{512, 512, 512, "nn", "any", 64}}));
  // Resume knows each problem apart.
  EXPECT_EQ(store.finalStatuses(test::testGpu()).size(), 4u);
}

TEST_F(dbBatch, ABatchedCallsRateCountsEveryProduct) {
  EXPECT_DOUBLE_EQ(gflopsOf({512, 512, 512, "nn", "any", 64}, 1.0), 64 * gflopsOf({512, 512, 512}, 1.0));
  auto r = at("nt", 64, 1);
  r.gflops.reset();
  r.medianMs = 2.0;
  ASSERT_TRUE(store.recordResult(run, r));
  EXPECT_DOUBLE_EQ(*store.results({}).at(0).gflops, 64 * 2.0 * 512 * 512 * 512 / 2e6);
}

TEST_F(dbBatch, BaselinesOfOneSizeAreKeptPerLayoutAndBatch) {
  ASSERT_TRUE(store.recordBaseline(run, baseline(1, 1.0)));
  ASSERT_TRUE(store.recordBaseline(run, baseline(64, 32.0)));
  auto tn = baseline(1, 2.0);
  tn.problem.layout = "tn";
  ASSERT_TRUE(store.recordBaseline(run, tn));
  auto gpuId = store.gpus().at(0).id;
  EXPECT_DOUBLE_EQ(*store.baselineGflops(gpuId, {512, 512, 512}), gflopsOf({512, 512, 512}, 1.0));
  EXPECT_DOUBLE_EQ(*store.baselineGflops(gpuId, {512, 512, 512, "nn", "any", 64}), 2 * gflopsOf({512, 512, 512}, 1.0));
  EXPECT_DOUBLE_EQ(*store.baselineGflops(gpuId, {512, 512, 512, "tn"}), gflopsOf({512, 512, 512}, 2.0));
  EXPECT_FALSE(store.baselineGflops(gpuId, {512, 512, 512, "nn", "any", 8}));
  auto all = store.baselines();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[1].problem, (ProblemKey{512, 512, 512, "nn", "any", 64}));
}
