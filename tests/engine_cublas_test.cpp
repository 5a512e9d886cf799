// cuBLAS as a candidate in the tuning engine, on the simulated GPU (tests/fake_worker `table`):
// every tuned size gets one cuBLAS row (family cublas, instance cublas_<layout>, verified by the
// worker, its median the baseline's re-timed one), none when the families leave cuBLAS out (the
// baselines are written either way), and a cuBLAS that fails verification is a wrong_result row.
// Run: ctest -R EngineCublas
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <map>

#include "Compiler.hpp"
#include "FamilyRegistry.hpp"
#include "GpuDetect.hpp"
#include "ResultStore.hpp"
#include "TuningEngine.hpp"
#include "scratch_dir.hpp"

using namespace gemmtune;
using gemmtune::test::ScratchDir;
namespace fs = std::filesystem;

namespace {

class EngineCublas : public ::testing::Test {
 protected:
  GpuOutcome tune(bool cublasRows, const char* family = "smem", bool fresh = false) {
    Compiler compiler(CompilerOptions{{}, dir_.path() / "cache", 0, {}});
    auto store = db::openStore(db_.string(), {db::OpenMode::ReadWrite});
    TuneOptions options;
    options.sizes = sizes_;
    options.families = {&FamilyRegistry::builtin().get(family)};
    options.cublasRows = cublasRows;
    options.strategy = "exhaustive";
    options.carry = 0;
    options.simulated = TuneOptions::SimulatedGpu{{GEMMTUNE_FAKE_WORKER, "table", dir_.path().string()}, 13000};
    options.commandLine = "engine_cublas_test";
    options.resume = !fresh;
    ProgressLine progress(false);
    std::atomic<bool> stop{false};
    TuningEngine engine(resolveGpu("h100"), compiler, *store, options, progress, stop);
    return engine.run();
  }

  // The rows of family cublas, by size (M).
  std::map<long long, db::StoredResult> cublasRows() const {
    std::map<long long, db::StoredResult> out;
    for (auto& r : db::openStore(db_.string(), {db::OpenMode::ReadOnly})->results({}))
      if (r.family == "cublas" && r.instance() == db::cublasInstance(r.key.problem.layout)) {
        EXPECT_TRUE(out.emplace(r.key.problem.m, r).second) << "two cuBLAS rows at " << r.key.problem.m;
      }
    return out;
  }
  std::vector<db::StoredBaseline> baselines() const {
    return db::openStore(db_.string(), {db::OpenMode::ReadOnly})->baselines();
  }
  // How many cuBLAS requests asked the worker to verify.
  int verifiedRequests() const {
    std::ifstream log(dir_.path() / "log");
    int n = 0;
    for (std::string line; std::getline(log, line);) n += line.rfind("cublas verified ", 0) == 0;
    return n;
  }

  std::vector<GemmShape> sizes_ = {{256, 256, 256}, {512, 512, 512}};
  ScratchDir dir_;
  fs::path db_ = dir_.path() / "cublas.db";
};

}  // namespace

TEST_F(EngineCublas, EveryTunedSizeGetsAVerifiedCublasRowWithTheBaselinesMedian) {
  const GpuOutcome out = tune(true);
  ASSERT_EQ(out.sizes.size(), 2u);
  const auto rows = cublasRows();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(verifiedRequests(), 2) << "one verified request per size; the re-timing rounds do not verify";
  std::map<long long, double> baselineMs;
  for (const auto& b : baselines()) baselineMs[b.problem.m] = b.medianMs;
  for (const auto& [m, r] : rows) {
    EXPECT_EQ(r.instance(), "cublas_nn");
    EXPECT_EQ(r.status, "ok");
    EXPECT_EQ(r.params, "{}");
    EXPECT_TRUE(r.cubin.empty());
    EXPECT_FALSE(r.registers);
    EXPECT_EQ(r.key.sourceHash.rfind("cublas ", 0), 0u) << r.key.sourceHash;  // the cuBLAS version
    EXPECT_EQ(r.key.compileOptions, "CUBLAS_DEFAULT_MATH");
    ASSERT_TRUE(r.medianMs);
    ASSERT_TRUE(baselineMs.count(m));
    EXPECT_DOUBLE_EQ(*r.medianMs, baselineMs[m]) << "the row and the baseline are the same (re-timed) median";
    EXPECT_GT(r.gflops.value_or(0), 0);
  }
  for (const SizeOutcome& size : out.sizes) {
    ASSERT_TRUE(size.cublasMs);
    EXPECT_DOUBLE_EQ(*size.cublasMs, *rows.at(size.shape.M).medianMs);
  }
}

TEST_F(EngineCublas, FamiliesWithoutCublasWriteNoCublasRowsButTheBaselines) {
  tune(false);
  EXPECT_TRUE(cublasRows().empty());
  EXPECT_EQ(baselines().size(), 2u);
  EXPECT_EQ(verifiedRequests(), 0);
}

TEST_F(EngineCublas, ACublasThatFailsVerificationIsAWrongResultRow) {
  std::ofstream(dir_.path() / "cublas-wrong") << "1\n";
  tune(true);
  const auto rows = cublasRows();
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& [m, r] : rows) {
    EXPECT_EQ(r.status, "wrong_result") << m;
    EXPECT_NE(r.errorText.find("elements wrong"), std::string::npos) << r.errorText;
    EXPECT_FALSE(r.medianMs);
  }
  EXPECT_TRUE(baselines().empty()) << "a wrong cuBLAS is no baseline";
}

// A warm rerun re-times nothing: its cuBLAS baseline (a long warm-up, alone) must not replace the
// row measured in interleaved rounds beside the kernels. With noise, the two differ.
TEST_F(EngineCublas, AWarmRerunKeepsTheReTimedCublasRow) {
  std::ofstream(dir_.path() / "noise") << "0.2\n";
  tune(true);
  const auto cold = cublasRows();
  tune(true);
  const auto warm = cublasRows();
  ASSERT_EQ(cold.size(), 2u);
  ASSERT_EQ(warm.size(), 2u);
  for (const auto& [m, r] : cold) {
    ASSERT_TRUE(r.medianMs && warm.at(m).medianMs);
    EXPECT_DOUBLE_EQ(*warm.at(m).medianMs, *r.medianMs) << m;
  }
}

// A stored failure (a transient cuBLAS error) is no measurement to keep: the next run replaces it.
TEST_F(EngineCublas, AStoredFailedCublasRowIsReplaced) {
  std::ofstream(dir_.path() / "cublas-wrong") << "1\n";
  tune(true);
  fs::remove(dir_.path() / "cublas-wrong");
  tune(true);
  for (const auto& [m, r] : cublasRows()) {
    EXPECT_EQ(r.status, "ok") << m;
    EXPECT_TRUE(r.medianMs) << m;
  }
}

// cuBLASLt's configuration, faster than cuBLAS's own call, is a cuBLAS row of its own named by it
// (cuBLAS's row stays), timed in the interleaved rounds with the finalists; a warm rerun keeps it
// and searches no more.
TEST_F(EngineCublas, AFasterCublasLtConfigurationIsARowOfItsOwnThatAWarmRunKeeps) {
  std::ofstream(dir_.path() / "cublaslt-pick") << "0.8\n";
  tune(true);
  auto ltRows = [&] {
    std::map<long long, db::StoredResult> out;
    for (auto& r : db::openStore(db_.string(), {db::OpenMode::ReadOnly})->results({}))
      if (r.family == "cublas" && r.instance() != db::cublasInstance(r.key.problem.layout)) out.emplace(r.key.problem.m, r);
    return out;
  };
  const auto cold = ltRows();
  ASSERT_EQ(cold.size(), 2u);
  const auto plain = cublasRows();
  for (const auto& [m, r] : cold) {
    EXPECT_EQ(r.instance(), "cublas_nn_lt1_t2_k1_r0_w0_s0_c0_i0_g0");
    EXPECT_EQ(r.status, "ok");
    EXPECT_TRUE(db::isCublasRow(r));
    ASSERT_TRUE(r.medianMs && plain.at(m).medianMs);
    EXPECT_LT(*r.medianMs, *plain.at(m).medianMs) << m;
  }
  auto count = [&](const std::string& prefix) {
    std::ifstream log(dir_.path() / "log");
    int n = 0;
    for (std::string line; std::getline(log, line);) n += line.rfind(prefix, 0) == 0;
    return n;
  };
  EXPECT_EQ(count("cublaslt "), 2);
  EXPECT_GT(count("cublas cublas lt "), 0) << "the configuration was not timed in the rounds";
  tune(true);
  EXPECT_EQ(count("cublaslt "), 2) << "a warm run searched again";
  EXPECT_EQ(ltRows().size(), 2u);
}

// A stored configuration is kept only for the cuBLAS that measured it: with another cuBLAS (its
// rows keyed anew) the search runs again. Kept, it is re-timed with a later run's finalists, and
// its row takes that figure.
TEST_F(EngineCublas, AStoredCublasLtRowStandsForItsCublasAndTakesALaterRunsRoundsFigure) {
  std::ofstream(dir_.path() / "cublaslt-pick") << "0.8\n";
  std::ofstream(dir_.path() / "noise") << "0.2\n";
  tune(true);
  auto ltRow = [&](long long m) {
    for (auto& r : db::openStore(db_.string(), {db::OpenMode::ReadOnly})->results({}))
      if (r.family == "cublas" && r.instance() != db::cublasInstance(r.key.problem.layout) && r.key.problem.m == m &&
          r.key.sourceHash == "cublas 0")
        return r;
    ADD_FAILURE() << "no cuBLASLt row at " << m;
    return db::StoredResult{};
  };
  const db::StoredResult before = ltRow(256);
  // Another family's candidates are timed anew at each size: the finalists, cuBLAS and the
  // stored configuration are re-timed in rounds.
  tune(true, "blocktile2d");
  const db::StoredResult after = ltRow(256);
  ASSERT_TRUE(before.medianMs && after.medianMs);
  EXPECT_NE(*after.medianMs, *before.medianMs) << "the stored configuration kept its first figure";
  EXPECT_EQ(after.id, before.id) << "the re-timed figure went into another row";
  std::ifstream log(dir_.path() / "log");
  int searches = 0;
  for (std::string line; std::getline(log, line);) searches += line.rfind("cublaslt ", 0) == 0;
  EXPECT_EQ(searches, 2) << "a stored configuration was searched again";

  std::ofstream(dir_.path() / "cublas-version") << "130200\n";
  tune(true);
  std::ifstream again(dir_.path() / "log");
  searches = 0;
  for (std::string line; std::getline(again, line);) searches += line.rfind("cublaslt ", 0) == 0;
  EXPECT_EQ(searches, 4) << "a configuration stored for another cuBLAS stood";
}

// A configuration slower than cuBLAS's own call is recorded too (so a later run searches no more),
// and never served: the lookup answers with the fastest row, cuBLAS's own.
TEST_F(EngineCublas, ASlowerCublasLtConfigurationIsRecordedAndNotSearchedAgain) {
  std::ofstream(dir_.path() / "cublaslt-pick") << "1.5\n";
  tune(true);
  tune(true);
  int lt = 0;
  for (auto& r : db::openStore(db_.string(), {db::OpenMode::ReadOnly})->results({}))
    if (r.family == "cublas" && r.instance() != db::cublasInstance(r.key.problem.layout)) {
      ++lt;
      ASSERT_TRUE(r.medianMs && cublasRows().at(r.key.problem.m).medianMs);
      EXPECT_GT(*r.medianMs, *cublasRows().at(r.key.problem.m).medianMs) << r.key.problem.m;
    }
  EXPECT_EQ(lt, 2);
  std::ifstream log(dir_.path() / "log");
  int searches = 0;
  for (std::string line; std::getline(log, line);) searches += line.rfind("cublaslt ", 0) == 0;
  EXPECT_EQ(searches, 2) << "a warm run searched again";
}

// A fresh run (tune --fresh) searches again; where it keeps another configuration, the one an
// earlier run kept is superseded (pruned, naming its successor), not served beside it. cuBLAS's own
// row stays, rows another cuBLAS measured or of another batch stay, and a later run keeps the new
// configuration.
TEST_F(EngineCublas, AFreshRunsConfigurationSupersedesTheOneStoredBefore) {
  std::ofstream(dir_.path() / "cublas-version") << "130200\n";
  std::ofstream(dir_.path() / "cublaslt-pick") << "0.5 lt3_t1_k1_r0_w0_s0_c0_i0_g0\n";
  tune(true);  // cuBLAS 130200's rows
  fs::remove(dir_.path() / "cublas-version");
  std::ofstream(dir_.path() / "cublaslt-pick") << "0.5 lt1_t2_k1_r0_w0_s0_c0_i0_g0\n";
  tune(true);
  const auto sizes = sizes_;
  sizes_ = {{256, 256, 256, {}, 4}};  // 256³ as a batch of four: the same M, N, K and layout
  tune(true);
  sizes_ = sizes;
  std::ofstream(dir_.path() / "cublaslt-pick") << "0.9 lt7_t3_k2_r1_w0_s0_c0_i0_g0\n";
  tune(true, "smem", true);
  std::map<std::string, int> statuses;  // by full status, instance and cuBLAS, over all three problems
  for (auto& r : db::openStore(db_.string(), {db::OpenMode::ReadOnly})->results({}))
    if (r.family == "cublas") {
      ++statuses[r.fullStatus() + " " + r.instance() + " " + r.key.sourceHash];
      if (r.key.problem.batch == 4) EXPECT_EQ(r.fullStatus(), "ok") << r.instance();
      if (r.status != "ok") {
        EXPECT_NE(r.errorText.find("cublas_nn_lt7_t3_k2"), std::string::npos) << r.errorText;
        EXPECT_FALSE(r.medianMs) << r.instance();
        EXPECT_FALSE(r.smClockMHz) << r.instance();  // the worker's 1980 MHz belonged to the old timing
      }
    }
  EXPECT_EQ(statuses["ok cublas_nn_lt7_t3_k2_r1_w0_s0_c0_i0_g0 cublas 0"], 2);
  EXPECT_EQ(statuses["pruned:superseded cublas_nn_lt1_t2_k1_r0_w0_s0_c0_i0_g0 cublas 0"], 2);
  EXPECT_EQ(statuses["ok cublas_nn_lt1_t2_k1_r0_w0_s0_c0_i0_g0 cublas 0"], 1);  // the batch of four's
  EXPECT_EQ(statuses["ok cublas_nn_lt3_t1_k1_r0_w0_s0_c0_i0_g0 cublas 130200"], 2);
  EXPECT_EQ(statuses["ok cublas_nn cublas 0"], 3);
  EXPECT_EQ(statuses["ok cublas_nn cublas 130200"], 2);
  EXPECT_EQ(statuses.size(), 6u);

  auto searches = [&] {
    std::ifstream log(dir_.path() / "log");
    int n = 0;
    for (std::string line; std::getline(log, line);) n += line.rfind("cublaslt ", 0) == 0;
    return n;
  };
  const int before = searches();
  tune(true);
  EXPECT_EQ(searches(), before) << "a run after the fresh one searched again";
  EXPECT_EQ(tune(true).sizes.at(0).cublasLtAlgo, "lt7_t3_k2_r1_w0_s0_c0_i0_g0");
}
