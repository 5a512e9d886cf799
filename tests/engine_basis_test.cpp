// The basis (tuner/BasisShapes, tuner/engine/BasisRun) on the simulated GPU (tests/fake_worker
// `table`): after the requested sizes, each family's finalists are timed on every basis shape,
// split-K families at every slice count, thin's skinny tiles first and guarded at skinny shapes; --no-basis writes nothing there; a spent budget records
// the basis untimed without the GPU; a second run resumes it and times nothing.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "BasisShapes.hpp"
#include "CandidateSpace.hpp"
#include "CliRunner.hpp"
#include "Compiler.hpp"
#include "FamilyRegistry.hpp"
#include "GpuDetect.hpp"
#include "GpuProfiles.hpp"
#include "ResultStore.hpp"
#include "search/SearchStrategy.hpp"
#include "TuneReport.hpp"
#include "TuningEngine.hpp"
#include "WorkerProtocol.hpp"
#include "engine/BasisRun.hpp"
#include "scratch_dir.hpp"

using namespace gemmtune;
using gemmtune::test::ScratchDir;
namespace fs = std::filesystem;

namespace {

// Small spaces that compile quickly: smem at two tile edges, and thin (split-K 1, 2, 4: a
// launch-only parameter) at two programs.
const Family& smallSmem() {
  static const Family f = withDomains(FamilyRegistry::builtin().get("smem"), {{"BLOCKSIZE", {16, 32}}});
  return f;
}
const Family& smallThin() {
  static const Family f = withDomains(FamilyRegistry::builtin().get("thin"),
                                      {{"BM", {32}}, {"BN", {32, 64}}, {"TM", {4}}, {"TN", {4}}, {"STAGES", {2}},
                                       {"SPLITK", {1, 2, 4}}});
  return f;
}

bool isBasisShape(const db::ProblemKey& p) {
  for (const BasisShape& b : basisShapes())
    if (p.m == b.shape.M && p.n == b.shape.N && p.k == b.shape.K) return true;
  return false;
}

class EngineBasis : public ::testing::Test {
 protected:
  GpuOutcome tune(bool basis, double basisShare = 1, const Family& thin = smallThin(),
                  const std::function<void(TuneOptions&)>& adjust = {}) {
    Compiler compiler(CompilerOptions{{}, dir_.path() / "cache", 0, {}});
    auto store = db::openStore(db_.string(), {db::OpenMode::ReadWrite});
    TuneOptions options;
    options.sizes = {{256, 256, 256}, {512, 512, 512}};
    options.families = {&smallSmem(), &thin};
    options.strategy = "exhaustive";
    options.carry = 0;
    options.basis = basis;
    options.basisShare = basisShare;  // 1: no limit, so that the test does not hang on this machine's speed
    options.simulated = TuneOptions::SimulatedGpu{{GEMMTUNE_FAKE_WORKER, "table", dir_.path().string()}, 13000};
    options.commandLine = "engine_basis_test";
    if (adjust) adjust(options);
    ProgressLine progress(false);
    std::atomic<bool> stop{false};
    TuningEngine engine(resolveGpu("h100"), compiler, *store, options, progress, stop);
    return engine.run();
  }

  // Rows at the basis shapes (or every row): "MxNxK instance" -> full status.
  std::map<std::string, std::string> basisRows(bool basisOnly = true) const {
    std::map<std::string, std::string> out;
    for (const auto& r : db::openStore(db_.string(), {db::OpenMode::ReadOnly})->results({}))
      if (!basisOnly || isBasisShape(r.key.problem))
        out[fmt::format("{}x{}x{} {}", r.key.problem.m, r.key.problem.n, r.key.problem.k, r.instance())] = r.fullStatus();
    return out;
  }

  ScratchDir dir_;
  fs::path db_ = dir_.path() / "basis.db";
};

}  // namespace

TEST(BasisShapes, EveryRequestedLayoutOnceAndNoRequestedProblemTwice) {
  const Layout nn{}, tn{true, false};
  const GemmShape requested{16, 4096, 4096};  // nn: tuned in full there
  const std::vector<GemmShape> shapes = basisShapesFor({nn, tn}, {requested});
  EXPECT_EQ(shapes.size(), 2 * basisShapes().size() - 1);
  EXPECT_EQ(std::count(shapes.begin(), shapes.end(), requested), 0);
  EXPECT_EQ(std::count(shapes.begin(), shapes.end(), GemmShape{16, 4096, 4096, tn, 1}), 1);
  for (const GemmShape& s : shapes) EXPECT_EQ(s.batch, 1);
  EXPECT_EQ(basisRegimeOf({4096, 4096, 32, tn, 1}), "small K");
  EXPECT_EQ(basisRegimeOf({16, 16, 2048}), "tiny M and N");  // thin's 8x32 and 16x16 measured where they win
  EXPECT_EQ(basisRegimeOf({4096, 4096, 4096}), "");
}

// A program's slice counts, nearest first to one block per SM (132 on an H100): at 16x4096x4096
// a 32x64 tile makes 64 blocks, so 2 slices; at 512x512x8192 a 32x32 tile makes 256, so 1.
TEST(BasisShapes, SliceCountsNearestFirstToOneBlockPerSm) {
  const Family& thin = FamilyRegistry::builtin().get("thin");
  Config c;
  c.family = &thin;
  c.values = {32, 64, 32, 4, 4, 2, 1};  // BM BN BK TM TN STAGES SPLITK
  auto slices = [&](const GemmShape& s) {
    std::vector<int> out;
    for (const Config& v : atEveryLaunchValue(basisFormFor(c, s), s, 132)) out.push_back(v["SPLITK"]);
    return out;
  };
  EXPECT_EQ(slices({16, 4096, 4096}), (std::vector<int>{2, 4, 1, 8, 16}));
  c.values[1] = 32;
  EXPECT_EQ(slices({512, 512, 8192}), (std::vector<int>{1, 2, 4, 8, 16}));
  EXPECT_TRUE(basisFormFor(c, {2000, 40, 3001}).guarded);
  EXPECT_FALSE(basisFormFor(c, {512, 512, 8192}).guarded);
}

// At a skinny shape thin's skinnyTiles come before the finalists, every program at its likeliest
// slice count before any at its second; elsewhere, and where --params leaves them out, only the
// finalists. Issue 28: the main job never timed thin's 8x32 tile, 1.2x cuBLAS at tiny M and N,
// so shapes nobody tuned got its 32x64 tile, 0.5x.
TEST(BasisShapes, SkinnyTilesComeFirstAtSkinnyShapesEachProgramAtItsLikeliestSlicesFirst) {
  const Family& thin = FamilyRegistry::builtin().get("thin");
  Config finalist;
  finalist.family = &thin;
  finalist.values = {32, 64, 32, 4, 4, 2, 1};  // BM BN BK TM TN STAGES SPLITK
  finalist.guarded = false;
  auto tiles = [](const std::vector<Config>& configs, size_t first) {
    std::vector<std::string> out;
    for (size_t i = 0; i < std::min(first, configs.size()); ++i)
      out.push_back(fmt::format("{}x{} sk{}", configs[i]["BM"], configs[i]["BN"], configs[i]["SPLITK"]));
    return out;
  };
  const std::vector<Config> skinny = basisCandidates(thin, {finalist}, {16, 16, 2048}, 132);
  ASSERT_EQ(skinny.size(), 4u * 5u);  // three skinny tiles and the finalist, at five slice counts each
  EXPECT_EQ(tiles(skinny, 4), (std::vector<std::string>{"8x32 sk16", "16x16 sk16", "32x16 sk16", "32x64 sk16"}));
  // Skinny tiles guarded even where they divide (the shapes a program has rarely do), a finalist
  // in the form the shape needs.
  EXPECT_TRUE(skinny[1].guarded) << "16x16 tiles divide 16x16x2048, and run guarded all the same";
  EXPECT_TRUE(skinny[3].guarded) << "M = 16 is not a multiple of the 32x64 finalist's 32";
  const std::vector<Config> divides = basisCandidates(thin, {finalist}, {512, 512, 8192}, 132);
  ASSERT_EQ(divides.size(), 5u);
  EXPECT_FALSE(divides.front().guarded);
  EXPECT_TRUE(isSkinnyShape({4096, 64, 64}));
  EXPECT_FALSE(isSkinnyShape({65, 65, 1}));
  // A finalist that is a skinny tile's program (at another slice count) is timed once, guarded.
  Config same = finalist;
  same.values = thin.skinnyTiles.front();
  same.values.back() = 4;
  const std::vector<Config> once = basisCandidates(thin, {same}, {16, 4096, 4096}, 132);
  EXPECT_EQ(once.size(), 3u * 5u);
  EXPECT_TRUE(std::all_of(once.begin(), once.end(), [](const Config& c) { return c.guarded; }));
  const Family narrowed = withDomains(thin, {{"BM", {32}}});
  EXPECT_EQ(basisCandidates(narrowed, {finalist}, {16, 4096, 4096}, 132).size(), 2u * 5u) << "32x16 only";
}

TEST_F(EngineBasis, EveryFamilysFinalistsAreTimedOnEveryBasisShapeAtEverySliceCount) {
  std::ofstream(dir_.path() / "cublaslt-pick") << "1\n";  // the fake worker offers cuBLASLt configurations
  const GpuOutcome run = tune(true);
  ASSERT_FALSE(run.interrupted);
  ASSERT_TRUE(run.basis);
  ASSERT_EQ(run.basis->shapes.size(), basisShapes().size());
  EXPECT_TRUE(run.basis->skipped.empty());
  const auto rows = basisRows();
  for (const SizeOutcome& shape : run.basis->shapes) {
    EXPECT_GT(shape.timed, 0) << shape.shape.str();
    EXPECT_TRUE(shape.cublasMs) << shape.shape.str() << ": every basis shape has its cuBLAS baseline";
    ASSERT_EQ(shape.families.size(), 2u) << shape.shape.str();
    for (const FamilyOutcome& f : shape.families) EXPECT_FALSE(f.bestInstance.empty()) << f.family << " at " << shape.shape.str();
  }
  // cuBLASLt's configurations are searched at the tuned sizes only: the basis's share goes to the
  // families (a cuBLASLt row serves its exact problem alone).
  std::ifstream log(dir_.path() / "log");
  std::size_t searches = 0;
  for (std::string line; std::getline(log, line);) searches += line.rfind("cublaslt ", 0) == 0;
  EXPECT_EQ(searches, run.sizes.size());
  // Each family's best at 512 (a finalist there) in its guarded form at a ragged shape, and
  // thin's at every slice count: one program, no new compile.
  for (const FamilyOutcome& f : run.sizes.at(1).families) {
    ASSERT_FALSE(f.bestInstance.empty()) << f.family;
    const std::string ragged = "2000x40x3001 " + f.bestInstance + "_guarded";
    if (f.family != "thin") {
      EXPECT_EQ(rows.count(ragged), 1u) << ragged;
      continue;
    }
    const std::string at = f.bestInstance.substr(0, f.bestInstance.find("_sk"));
    for (const char* sk : {"_sk1", "_sk2", "_sk4"}) {
      const std::string name = "2000x40x3001 " + at + sk + "_guarded";
      ASSERT_EQ(rows.count(name), 1u) << name;
      EXPECT_EQ(rows.at(name).rfind("ok", 0), 0u) << name << " " << rows.at(name);  // ok, or ok:retimed
    }
  }
  // Where every tile divides (512x512x8192), the unguarded form.
  bool unguarded = false;
  for (const auto& [row, status] : rows)
    unguarded = unguarded || (row.rfind("512x512x8192 ", 0) == 0 && row.find("_guarded") == std::string::npos);
  EXPECT_TRUE(unguarded);
  const std::string table = formatTuneTable({run});
  EXPECT_NE(table.find(fmt::format("basis: {} shape(s) in ", basisShapes().size())), std::string::npos) << table;
  EXPECT_NE(table.find("16x4096x4096       skinny M"), std::string::npos) << table;
  const nlohmann::json json = tuneJson({run});
  EXPECT_EQ(json["gpus"][0]["basis"]["shapes"].size(), basisShapes().size());
  EXPECT_EQ(json["gpus"][0]["basis"]["shapes"][0]["regime"], "skinny M");
}

// With thin's domains keeping two of its skinny tiles (16x16 and 32x16, not 8x32), both are timed
// guarded at every skinny basis shape, none at the others, and a second run times nothing.
TEST_F(EngineBasis, SkinnyTilesAreTimedGuardedAtEverySkinnyShapeAndResumed) {
  static const Family thin = withDomains(FamilyRegistry::builtin().get("thin"),
                                         {{"BM", {16, 32}}, {"BN", {16}}, {"TM", {2}}, {"TN", {2}}, {"STAGES", {4}},
                                          {"SPLITK", {1, 2, 4}}});
  ASSERT_TRUE(tune(true, 1, thin).basis);
  const auto rows = basisRows();
  for (const BasisShape& b : basisShapes())
    for (const char* tile : {"thin_bm16_bn16_bk32_tm2_tn2_st4", "thin_bm32_bn16_bk32_tm2_tn2_st4"}) {
      const std::string guarded = fmt::format("{}x{}x{} {}_sk1_guarded", b.shape.M, b.shape.N, b.shape.K, tile);
      if (!isSkinnyShape(b.shape)) continue;
      ASSERT_EQ(rows.count(guarded), 1u) << guarded;
      EXPECT_EQ(rows.at(guarded).rfind("ok", 0), 0u) << guarded << " " << rows.at(guarded);
      const std::string unguarded = guarded.substr(0, guarded.size() - std::string("_guarded").size());
      EXPECT_EQ(rows.count(unguarded), 0u) << unguarded;
    }
  for (const auto& [row, status] : rows) EXPECT_EQ(row.find("bm8_bn32"), std::string::npos) << row;
  const GpuOutcome second = tune(true, 1, thin);
  ASSERT_TRUE(second.basis);
  for (const SizeOutcome& shape : second.basis->shapes) EXPECT_EQ(shape.timed, 0) << shape.shape.str();
  EXPECT_EQ(basisRows(), rows);
}

// thin's 16x16 and 32x16 skinny tiles among 3 x 3 tiles; thin_bm32_bn16_bk32_tm2_tn2_st4_sk2 -> true.
bool isSkinnyTileRow(const std::string& instance) {
  return instance.find("_bm16_bn16_bk32_tm2_tn2_st4_sk") != std::string::npos ||
         instance.find("_bm32_bn16_bk32_tm2_tn2_st4_sk") != std::string::npos;
}

// Seeds, however slow, are timed on top of --carry and never use up the patience (4 here): the
// ranked candidates get the fastest and four more with --carry 1, six and then the patience with
// --carry 6, as without seeds.
TEST(ModelSearch, SeedsAreTimedOnTopOfTheCarryAndThePatience) {
  // p0..p4: seeds, each slower than the last (counted, they would spend the patience and the
  // carry); p5 the fastest, then p6, p7, ... in order.
  auto msOf = [](size_t i) { return i < 5 ? 10.0 + double(i) : i == 5 ? 1.0 : 5.0 + 0.1 * double(i); };
  auto proposals = [&](int carry, size_t expectedAtStart) {
    auto model = makeStrategy("model", StrategyOptions{carry});
    std::vector<SearchPoint> points;
    for (int i = 0; i < 17; ++i) points.push_back({fmt::format("p{}", i), false, 0, 8});
    model->start(SearchContext{{1024, 1024, 1024}, 132}, points);
    for (size_t i = 0; i < points.size(); ++i) model->tell(i, Measurement{msOf(i), 1});
    for (size_t i = 0; i < 5; ++i) points[i].seed = true;
    model->start(SearchContext{{16, 4096, 4096}, 132}, points);
    EXPECT_EQ(model->expectedRemaining(), expectedAtStart) << "--carry " << carry;
    size_t proposed = 0;
    for (size_t expected = 0; auto i = model->next(); ++expected, ++proposed) {
      EXPECT_EQ(*i, expected) << "--carry " << carry;
      model->tell(*i, Measurement{msOf(*i), 1});
    }
    return proposed;
  };
  EXPECT_EQ(proposals(1, 5 + 4), 5u + 1 + 4);
  EXPECT_EQ(proposals(6, 5 + 6), 5u + 6);  // p5..p10: the carry; p6..p10 also the patience
}

// A resumed run asked for a --carry above the ranked candidates an earlier run timed ranks
// afresh, whatever number of seeds that run timed besides.
TEST_F(EngineBasis, ResumingWithALargerCarryRanksAfreshWhateverTheSeedsTimed) {
  static const Family thin = withDomains(FamilyRegistry::builtin().get("thin"),
                                         {{"BM", {16, 32, 64}}, {"BN", {16, 32, 64}}, {"TM", {2}}, {"TN", {2, 4}},
                                          {"STAGES", {4}}, {"SPLITK", {1, 2, 4}}});
  auto okAtSkinny = [&](bool seeds) {
    int n = 0;
    for (const auto& [row, status] : basisRows(false))
      n += row.rfind("16x512x512 thin_", 0) == 0 && status.rfind("ok", 0) == 0 && isSkinnyTileRow(row) == seeds;
    return n;
  };
  auto tuneWithCarry = [&](int carry) {
    tune(false, 1, thin, [carry](TuneOptions& o) {
      o.sizes = {{128, 128, 128}, {16, 512, 512}};
      o.strategy = "model";
      o.carry = carry;
    });
  };
  tuneWithCarry(1);
  const int ranked = okAtSkinny(false);
  ASSERT_EQ(okAtSkinny(true), 6);
  tuneWithCarry(ranked + 3);  // fewer than the ranked and the seeds together
  EXPECT_GE(okAtSkinny(false), ranked + 3) << "the earlier run's ranking stood";
}

// The model search proposes the seeds (the family's skinny tiles at a skinny shape) right after
// the classic configuration, however slow it predicts them, and outside its ranks.
TEST(ModelSearch, SeedsComeRightAfterTheClassicWhateverItPredicts) {
  auto model = makeStrategy("model", StrategyOptions{1});
  std::vector<SearchPoint> points = {{"fast", false, 0, 8}, {"slow_tile", false, 0, 8}, {"classic", true, 0, 8}};
  model->start(SearchContext{{1024, 1024, 1024}, 132}, points);
  for (size_t i = 0; i < points.size(); ++i) model->tell(i, Measurement{std::vector<double>{1, 10, 5}[i], 1});
  points[1].seed = true;
  model->start(SearchContext{{16, 4096, 4096}, 132}, points);
  EXPECT_EQ(model->plan(), (std::vector<size_t>{2, 1, 0}));
  EXPECT_NE(model->notTimedReason(0).find("rank 1 of 1"), std::string::npos) << model->notTimedReason(0);
}

// A tune of a skinny size (here after a square one, with --carry 1) times thin's skinny tiles in
// the domains at every slice count, whatever the square size ranked them, also on resuming a
// database whose earlier run ranked them out.
TEST_F(EngineBasis, ATunedSkinnySizeTimesTheSkinnyTilesAlsoWhereAnEarlierRunRankedThemOut) {
  static const Family thin = withDomains(FamilyRegistry::builtin().get("thin"),
                                         {{"BM", {16, 32, 64}}, {"BN", {16, 32, 64}}, {"TM", {2}}, {"TN", {2, 4}},
                                          {"STAGES", {4}}, {"SPLITK", {1, 2, 4}}});
  auto tuneSkinny = [&] {
    tune(false, 1, thin, [](TuneOptions& o) {
      o.sizes = {{128, 128, 128}, {16, 512, 512}};  // tuned smallest first
      o.strategy = "model";
      o.carry = 1;
    });
  };
  auto count = [&](const std::string& statusPrefix, bool skinnyTilesOnly) {
    int n = 0;
    for (const auto& [row, status] : basisRows(false))
      n += row.rfind("16x512x512 thin_", 0) == 0 && status.rfind(statusPrefix, 0) == 0 &&
           (!skinnyTilesOnly || isSkinnyTileRow(row));
    return n;
  };
  tuneSkinny();
  EXPECT_EQ(count("ok", true), 6) << "16x16 and 32x16 at 1, 2 and 4 slices";
  EXPECT_GT(count("pruned:rank", false), 0) << "the search stopped early: the test says nothing otherwise";

  // As a run from before seeds existed left them.
  auto store = db::openStore(db_.string(), {db::OpenMode::ReadWrite});
  const std::int64_t run = store->beginRun(db::RunInfo{resolveGpu("h100"), 13000, "13.0"});
  for (db::StoredResult r : store->results({}))
    if (r.key.problem.m == 16 && isSkinnyTileRow(r.instance())) {
      r.setStatus("pruned:rank");
      r.errorText = "rank 9 of 30 by predicted time (1 ms, from its time at 128x128x128); the search stopped";
      r.medianMs = r.minMs = std::nullopt;
      r.measuredAt.clear();
      ASSERT_TRUE(store->recordResult(run, r)) << r.instance();
    }
  store->endRun(run);
  store.reset();
  ASSERT_EQ(count("pruned:rank", true), 6);
  tuneSkinny();
  EXPECT_EQ(count("ok", true), 6) << "a seed's rank pruning does not stand";
}

TEST_F(EngineBasis, NoBasisWritesNoRowAtTheBasisShapes) {
  const GpuOutcome run = tune(false);
  EXPECT_FALSE(run.basis);
  EXPECT_TRUE(basisRows().empty());
  EXPECT_EQ(formatTuneTable({run}).find("basis:"), std::string::npos);
}

// The basis's share spent before it began (as when the sizes were all resumed in a few seconds):
// every candidate is recorded pruned:budget with the reason, on no GPU, and a later run with
// time times them.
TEST_F(EngineBasis, ASpentBudgetRecordsTheBasisUntimedAndALaterRunTimesIt) {
  const GpuOutcome spent = tune(true, 1e-9);
  ASSERT_TRUE(spent.basis);
  EXPECT_EQ(spent.basis->skipped.size(), basisShapes().size());
  for (const SizeOutcome& shape : spent.basis->shapes) {
    EXPECT_EQ(shape.timed, 0) << shape.shape.str();
    EXPECT_FALSE(shape.cublasMs) << shape.shape.str() << ": its problem was never set on the GPU";
  }
  auto rows = basisRows();
  ASSERT_FALSE(rows.empty());
  for (const auto& [row, status] : rows)
    EXPECT_TRUE(status == "pruned:budget" || status.rfind("rejected", 0) == 0) << row << " " << status;
  const auto stored = db::openStore(db_.string(), {db::OpenMode::ReadOnly})->results({});
  const auto budget = std::find_if(stored.begin(), stored.end(),
                                   [](const db::StoredResult& r) { return r.fullStatus() == "pruned:budget"; });
  ASSERT_NE(budget, stored.end());
  EXPECT_NE(budget->errorText.find("the basis's time was spent"), std::string::npos) << budget->errorText;
  EXPECT_NE(formatTuneTable({spent}).find("not timed, the basis's time was spent"), std::string::npos);

  const GpuOutcome later = tune(true);
  ASSERT_TRUE(later.basis);
  EXPECT_TRUE(later.basis->skipped.empty());
  for (const SizeOutcome& shape : later.basis->shapes) EXPECT_GT(shape.timed, 0) << shape.shape.str();
}

TEST_F(EngineBasis, ASecondRunResumesTheBasisOnNoGpu) {
  const GpuOutcome first = tune(true);
  ASSERT_TRUE(first.basis);
  const auto rows = basisRows();
  const GpuOutcome second = tune(true);
  ASSERT_TRUE(second.basis);
  ASSERT_EQ(second.basis->shapes.size(), first.basis->shapes.size());
  for (size_t i = 0; i < second.basis->shapes.size(); ++i) {
    const SizeOutcome& shape = second.basis->shapes[i];
    EXPECT_EQ(shape.timed, 0) << shape.shape.str();
    EXPECT_GT(shape.resumed, 0) << shape.shape.str();
    // Stored and re-timed already: its problem is never set, not even for a cuBLAS baseline.
    EXPECT_FALSE(shape.cublasMs) << shape.shape.str();
    EXPECT_EQ(shape.bestInstance, first.basis->shapes[i].bestInstance) << shape.shape.str();
  }
  EXPECT_EQ(basisRows(), rows);
}

// A warm rerun spends the basis's share (a share of a few seconds) before its first shape, but
// every candidate there is stored: nothing is left untimed, and the table says so.
TEST_F(EngineBasis, AResumedBasisIsNotReportedUntimedWhenItsShareIsSpent) {
  ASSERT_TRUE(tune(true).basis);
  const GpuOutcome warm = tune(true, 1e-9);
  ASSERT_TRUE(warm.basis);
  for (const SizeOutcome& shape : warm.basis->shapes) EXPECT_GT(shape.resumed, 0) << shape.shape.str();
  EXPECT_TRUE(warm.basis->skipped.empty());
  EXPECT_EQ(formatTuneTable({warm}).find("not timed"), std::string::npos) << formatTuneTable({warm});
}

// An earlier run that stopped before re-timing a shape's finalists left every candidate stored
// but not compared in the same rounds: with the share spent, that shape is still untimed.
TEST_F(EngineBasis, ABasisShapeWhoseFinalistsWereNeverRetimedIsReportedUntimedWhenItsShareIsSpent) {
  ASSERT_TRUE(tune(true).basis);
  auto store = db::openStore(db_.string(), {db::OpenMode::ReadWrite});
  const std::int64_t run = store->beginRun(db::RunInfo{resolveGpu("h100"), 13000, "13.0"});
  int cleared = 0;
  for (db::StoredResult r : store->results({}))
    if (isBasisShape(r.key.problem) && r.fullStatus() == std::string("ok:") + kReasonRetimed) {
      r.setStatus("ok");  // as the first timing left it
      r.measuredAt.clear();  // now: later than the re-timed row
      ASSERT_TRUE(store->recordResult(run, r)) << r.instance();
      ++cleared;
    }
  store->endRun(run);
  store.reset();
  ASSERT_GT(cleared, 0) << "the first run re-timed no basis finalist: the test says nothing";
  const GpuOutcome warm = tune(true, 1e-9);
  ASSERT_TRUE(warm.basis);
  EXPECT_FALSE(warm.basis->skipped.empty());
}

// The command line: the basis runs after --sizes unless --no-basis, never after --shapes, --mnk,
// --shard or --seen (a workload, one shape, part of a sweep, recorded shapes: tuned as asked).
TEST(TuneCliBasis, NoBasisShapesMnkShardAndSeenRunNone) {
  ScratchDir dir;
  const std::vector<std::string> env{
      "GEMMTUNE_SIMULATED_GPU=h100",
      "GEMMTUNE_SIMULATED_WORKER=" + std::string(GEMMTUNE_FAKE_WORKER) + " table " + (dir.path() / "worker").string(),
      "XDG_CACHE_HOME=" + (dir.path() / "cache").string()};
  const std::string db = (dir.path() / "cli.db").string();
  const std::vector<std::string> base{"tune", "--families", "smem", "--params", "BLOCKSIZE=16", "--db", db, "--json"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = test::runCli(args, env);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    return nlohmann::json::parse(r.out)["gpus"][0];
  };
  EXPECT_FALSE(with({"--sizes", "128", "--no-basis"}).contains("basis"));
  const fs::path shapes = dir.path() / "shapes.txt";
  std::ofstream(shapes) << "128x64x32\n";
  EXPECT_FALSE(with({"--shapes", shapes.string()}).contains("basis"));
  EXPECT_FALSE(with({"--mnk", "128x64x32"}).contains("basis"));
  EXPECT_FALSE(with({"--sizes", "128", "--shard", "0/1"}).contains("basis"));
  db::openStore(db, {db::OpenMode::ReadWrite})
      ->recordSeen(findGpuProfile("h100")->spec, std::vector<db::SeenRecord>{{db::ProblemKey{96, 64, 32}, 2, 1.0}});
  EXPECT_FALSE(with({"--seen"}).contains("basis"));
  for (const auto& r : db::openStore(db, {db::OpenMode::ReadOnly})->results({}))
    EXPECT_FALSE(isBasisShape(r.key.problem)) << r.instance() << " at " << r.key.problem.m;
  EXPECT_TRUE(with({"--sizes", "128"}).contains("basis"));
  auto help = test::runCli({"tune", "--help"});
  EXPECT_NE(help.out.find("--no-basis"), std::string::npos);
}
