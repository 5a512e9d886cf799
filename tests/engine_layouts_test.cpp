// The tuning engine across layouts and batches, on the simulated GPU (tests/fake_worker `table`):
// every size is tuned once per layout and batch, each with its own cuBLAS baseline, its rows keyed
// with its layout and batch (so none resumes another's), and the model search learns within a
// series (one layout and batch) only.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <set>

#include "Compiler.hpp"
#include "FamilyPlans.hpp"
#include "FamilyRegistry.hpp"
#include "GpuDetect.hpp"
#include "ResultStore.hpp"
#include "TuneReport.hpp"
#include "TuningEngine.hpp"
#include "search/SearchStrategy.hpp"
#include "scratch_dir.hpp"

using namespace gemmtune;
using gemmtune::test::ScratchDir;
namespace fs = std::filesystem;

namespace {

const Layout kNn{}, kTn{true, false};

// The smem family with a plan that serves every layout and batch: the simulated GPU runs no
// kernel, so the engine's handling of layouts and batches is tested whichever families read them.
const Family& everyLayoutSmem() {
  static const Family family = [] {
    Family f = FamilyRegistry::builtin().get("smem");
    f.plan = [](const Config& c, const GemmProblem& p) {
      const int bs = c["BLOCKSIZE"];
      return tiledPlan(c, p, {bs, bs, bs});
    };
    return f;
  }();
  return family;
}

class EngineLayouts : public ::testing::Test {
 protected:
  GpuOutcome tune(const std::vector<GemmShape>& sizes, const std::string& strategy = "exhaustive") {
    Compiler compiler(CompilerOptions{{}, dir_.path() / "cache", 0, {}});
    auto store = db::openStore(db_.string(), {db::OpenMode::ReadWrite});
    TuneOptions options;
    options.sizes = sizes;
    options.families = {&everyLayoutSmem()};
    options.strategy = strategy;
    options.carry = 0;
    options.simulated = TuneOptions::SimulatedGpu{{GEMMTUNE_FAKE_WORKER, "table", dir_.path().string()}, 13000};
    options.commandLine = "engine_layouts_test";
    options.basis = false;  // the requested problems alone (the basis: engine_basis_test)
    ProgressLine progress(false);
    std::atomic<bool> stop{false};
    TuningEngine engine(resolveGpu("h100"), compiler, *store, options, progress, stop);
    return engine.run();
  }

  std::vector<db::StoredResult> rows() const {
    return db::openStore(db_.string(), {db::OpenMode::ReadOnly})->results({});
  }

  ScratchDir dir_;
  fs::path db_ = dir_.path() / "layouts.db";
};

}  // namespace

TEST_F(EngineLayouts, EachLayoutAndBatchIsTunedAndKeyedApart) {
  const GemmShape nn{256, 256, 256}, tn{256, 256, 256, kTn, 1}, batched{256, 256, 256, kNn, 4};
  const GpuOutcome first = tune({nn, tn, batched});
  ASSERT_EQ(first.sizes.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const SizeOutcome& size = first.sizes[i];
    EXPECT_EQ(size.shape, (std::vector<GemmShape>{nn, tn, batched}[i]));
    EXPECT_TRUE(size.cublasMs) << size.shape.str() << ": a cuBLAS baseline of its own";
    EXPECT_GT(size.timed, 0) << size.shape.str() << ": nothing resumed from another layout or batch";
    EXPECT_EQ(size.resumed, 0) << size.shape.str();
    ASSERT_EQ(size.families.size(), 1u);
    EXPECT_FALSE(size.families[0].bestInstance.empty()) << size.shape.str();
  }
  EXPECT_NE(first.sizes[1].bestInstance.find("_tn"), std::string::npos) << first.sizes[1].bestInstance;
  EXPECT_EQ(first.sizes[2].bestInstance.find("_tn"), std::string::npos) << first.sizes[2].bestInstance;

  // The tn rows name their layout; the nn rows are twice as many as the tn ones (batch 1 and 4),
  // half of them keyed with batch 4: their cache key hashes say so.
  std::map<std::string, int> okPerLayout;
  int batch4 = 0, batch1 = 0;
  for (const db::StoredResult& r : rows()) {
    if (r.status != "ok") continue;
    okPerLayout[r.key.problem.layout]++;
    EXPECT_EQ(r.key.problem.layout == "tn", r.instance().find("_tn") != std::string::npos) << r.instance();
    db::CacheKey key = r.key;
    key.problem.batch = 4;
    batch4 += key.hash() == r.cacheKeyHash;
    key.problem.batch = 1;
    batch1 += key.hash() == r.cacheKeyHash;
  }
  ASSERT_GT(okPerLayout["tn"], 0);
  EXPECT_EQ(okPerLayout["nn"], 2 * okPerLayout["tn"]);
  EXPECT_EQ(batch4, okPerLayout["tn"]);
  EXPECT_EQ(batch1, 2 * okPerLayout["tn"]);
  std::set<std::string> baselineLayouts;
  for (const auto& b : db::openStore(db_.string(), {db::OpenMode::ReadOnly})->baselines())
    baselineLayouts.insert(b.problem.layout);
  EXPECT_EQ(baselineLayouts, (std::set<std::string>{"nn", "tn"}));

  // The same sizes again resume every row of their own and time nothing.
  const GpuOutcome again = tune({nn, tn, batched});
  ASSERT_EQ(again.sizes.size(), 3u);
  for (const SizeOutcome& size : again.sizes) {
    EXPECT_EQ(size.timed, 0) << size.shape.str();
    EXPECT_GT(size.resumed, 0) << size.shape.str();
  }
}

// The summary and the progress name the layout and batch of every size.
TEST_F(EngineLayouts, TheSummaryNamesLayoutAndBatch) {
  const GpuOutcome out = tune({GemmShape{256, 128, 64, kTn, 8}});
  ASSERT_EQ(out.sizes.size(), 1u);
  EXPECT_EQ(out.sizes[0].shape.str(), "256x128x64 tn batch 8");
  const std::string table = formatTuneTable({out});
  EXPECT_NE(table.find("size 256x128x64 tn batch 8  cuBLAS"), std::string::npos) << table;
  const auto json = tuneJson({out});
  EXPECT_EQ(json["gpus"][0]["sizes"][0]["layout"], "tn");
  EXPECT_EQ(json["gpus"][0]["sizes"][0]["batch"], 8);
}

// A series (layout and batch) learns from its own smaller sizes only: at 1024 batch 64 nothing of
// the batch-1 sizes is used (everything is timed), at 2048 batch 1 the 1024 measurement is.
TEST(ModelSearchSeries, LearnsOnlyFromItsOwnLayoutAndBatch) {
  auto model = makeStrategy("model", StrategyOptions{1});
  const std::vector<SearchPoint> points = {{"a", false, 0, 8}, {"b", false, 0, 8}, {"c", false, 0, 8}};
  model->start(SearchContext{{1024, 1024, 1024}, 132}, points);
  for (size_t i = 0; i < points.size(); ++i) model->tell(i, Measurement{1.0 + double(i), 1});

  model->start(SearchContext{{1024, 1024, 1024, kNn, 64}, 132}, points);
  EXPECT_EQ(model->expectedRemaining(), 3u) << "a new series is searched in full";
  EXPECT_NE(model->notTimedReason(2).find("not measured at a smaller size"), std::string::npos)
      << model->notTimedReason(2);

  model->start(SearchContext{{2048, 2048, 2048}, 132}, points);
  EXPECT_NE(model->notTimedReason(2).find("from its time at 1024"), std::string::npos) << model->notTimedReason(2);
  model->start(SearchContext{{2048, 2048, 2048, kTn, 1}, 132}, points);
  EXPECT_NE(model->notTimedReason(2).find("not measured at a smaller size"), std::string::npos)
      << model->notTimedReason(2);
}
