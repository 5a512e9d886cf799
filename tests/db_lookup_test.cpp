// Lookup: exact match, the nearest-size rule with the guarded form, family restriction, stale
// rows never best, re-validation against the GPU's limits and its peak speed, memoisation.
// Run: ctest -R dbLookup
#include <fmt/format.h>

#include <cmath>

#include "PresentEnvironment.hpp"
#include "Database.hpp"
#include "GpuProfiles.hpp"
#include "SqliteStore.hpp"
#include "Lookup.hpp"
#include "SizeDistance.hpp"
#include "SpeedBound.hpp"
#include "db_test_support.hpp"

using namespace gemmtune;
using namespace gemmtune::db;
using namespace gemmtune::serving;
using gemmtune::test::ScratchDir;

namespace {

struct LookupFixture : ::testing::Test {
  ScratchDir dir;
  Database db{dir / "tune.db", {OpenMode::ReadWrite, OpenCheck::Quick}};
  SqliteStore store{db};
  std::int64_t run = store.beginRun(test::testRun());
  GpuSpec gpu = test::testGpu();

  PresentEnvironment present() {
    PresentEnvironment p = serving::presentEnvironment();
    p.driverVersion = test::kDriver;
    return p;
  }
  void add(const std::string& instance, long long m, long long n, long long k, double gflops) {
    ASSERT_TRUE(store.recordResult(run, test::okResult(instance, m, n, k, gflops)));
  }
};

}  // namespace

using dbLookup = LookupFixture;

TEST(dbLookupRule, SizeDistanceWeighsAreaThenDepthThenAspect) {
  EXPECT_DOUBLE_EQ(sizeDistance({4096, 4096, 4096}, {4096, 4096, 4096}), 0);
  EXPECT_DOUBLE_EQ(sizeDistance({4096, 4096, 4096}, {2048, 2048, 2048}), 2 + 0.5);
  EXPECT_DOUBLE_EQ(sizeDistance({1024, 4096, 512}, {2048, 1024, 512}), 1 + 0 + 0.25 * 3);
  // The shape of the measured regression: 4096x1024x512 shares its output area with 2048³.
  const ProblemKey asked{4096, 1024, 512};
  EXPECT_LT(sizeDistance(asked, {2048, 2048, 2048}), sizeDistance(asked, {1024, 1024, 1024}));
  EXPECT_LT(sizeDistance(asked, {2048, 2048, 2048}), sizeDistance(asked, {4096, 4096, 4096}));
  // Squares keep their order: the nearest edge wins.
  EXPECT_LT(sizeDistance({1000, 1000, 1000}, {1024, 1024, 1024}), sizeDistance({1000, 1000, 1000}, {2048, 2048, 2048}));
}

TEST_F(dbLookup, ExactMatchIsTheFastestOkRow) {
  add("blocktile1d_bm64_bn64_bk8_tm8", 4096, 4096, 4096, 17000);
  add("smem_bs32", 4096, 4096, 4096, 9000);
  add("blocktile1d_bm128_bn64_bk8_tm8", 2048, 2048, 2048, 25000);
  Lookup lookup(store, present());
  auto r = lookup.best(gpu, {4096, 4096, 4096});
  EXPECT_EQ(r.quality, MatchQuality::exact);
  EXPECT_EQ(r.instance, "blocktile1d_bm64_bn64_bk8_tm8");
  EXPECT_DOUBLE_EQ(r.gflops, 17000);
  EXPECT_EQ(r.loweredNames, std::vector<std::string>{"_Z18sgemm_blocktile_1dILi64ELi64ELi8ELi8ELb0EEviiifPKfS1_fPf"});
  EXPECT_EQ(r.cubin.substr(1, 3), "ELF");
  auto smemOnly = lookup.best(gpu, {4096, 4096, 4096}, "smem");
  EXPECT_EQ(smemOnly.instance, "smem_bs32");
  EXPECT_EQ(lookup.best(gpu, {4096, 4096, 4096}, "nosuchfamily").quality, MatchQuality::none);
}

TEST_F(dbLookup, NearestSizeTakesTheClosestMeasuredSizeInGuardedFormWhenTilesDoNotDivide) {
  add("blocktile1d_bm64_bn64_bk8_tm8", 1024, 1024, 1024, 15000);    // d(1000^3) ~ 0.10
  add("smem_bs32", 4096, 4096, 4096, 9000);                         // d ~ 6.0, slower at any size
  Lookup lookup(store, present());
  auto r = lookup.best(gpu, {1000, 1000, 1000});
  EXPECT_EQ(r.quality, MatchQuality::nearest_size);
  EXPECT_EQ(r.measuredInstance, "blocktile1d_bm64_bn64_bk8_tm8");
  EXPECT_EQ(r.instance, "blocktile1d_bm64_bn64_bk8_tm8_guarded");  // 1000 is not a multiple of 64
  EXPECT_TRUE(r.config->guarded);
  EXPECT_EQ(r.measuredProblem, (ProblemKey{1024, 1024, 1024}));
  EXPECT_NEAR(r.distance, 2.5 * std::log2(1024.0 / 1000.0), 1e-12);  // area 2x, depth 0.5x the log ratio
  EXPECT_TRUE(r.cubin.empty());  // the stored cubin is the unguarded kernel

  auto divisible = lookup.best(gpu, {2048, 2048, 2048});  // d = 2.5 to 1024 and to 4096
  EXPECT_EQ(divisible.quality, MatchQuality::nearest_size);
  EXPECT_EQ(divisible.measuredProblem, (ProblemKey{1024, 1024, 1024}));
  EXPECT_EQ(divisible.instance, "blocktile1d_bm64_bn64_bk8_tm8");  // tiles divide 2048: unguarded
  EXPECT_FALSE(divisible.cubin.empty());
}

// An untuned shape takes the row the model predicts (raw: the wave model, no SM clock here) fastest there, not the nearest shape's
// fastest: on 132 SMs, 128×128 tiles (8 warps) make 128 blocks at 2048x1024 (one per SM) but 160
// at 2048x1280 (two share some SMs: twice as long); 64×64 tiles (4 warps, several fit an SM) make
// 512 (at most 4 per SM) and 640 (at most 5), 16 warps and more: a full SM either way, 5/4 as long.
// 1.0 ms → 2.0 ms against 1.2 ms → 1.5 ms: the slower row at 2048x1024 wins at 2048x1280 (the
// kind of miss measured on an H100: 3055x628x1796 ran the nearest shape's winner at 0.57x cuBLAS
// where another row of that shape ran 1.02x).
TEST_F(dbLookup, AnUntunedShapeTakesTheRowPredictedFastestThere) {
  const std::string big = "warptile_bm128_bn128_bk8_wm64_wn32_wni2_tm4_tn4_t256";
  const std::string small = "warptile_bm64_bn64_bk16_wm32_wn32_wni1_tm8_tn4_t128";
  const double flops = 2.0 * 2048 * 1024 * 1024;
  add(big, 2048, 1024, 1024, flops / 1.0e6);    // 1.0 ms
  add(small, 2048, 1024, 1024, flops / 1.2e6);  // 1.2 ms
  add("blocktile1d_bm64_bn64_bk8_tm8", 8192, 8192, 8192, 8000);  // far away (d 5.7): slower carried here
  Lookup lookup(store, present());
  EXPECT_EQ(lookup.best(gpu, {2048, 1024, 1024}).instance, big);  // measured there: the fastest row
  auto r = lookup.best(gpu, {2048, 1280, 1024});
  EXPECT_EQ(r.quality, MatchQuality::nearest_size);
  EXPECT_EQ(r.instance, small);
  EXPECT_EQ(r.measuredProblem, (ProblemKey{2048, 1024, 1024}));
  EXPECT_NEAR(r.predictedMs, 1.5, 1e-9);
  EXPECT_NE(r.reason.find("best of 3 programs in 3 rows of 2 tuned sizes"), std::string::npos) << r.reason;
}

TEST_F(dbLookup, StaleRowsAreNeverBest) {
  auto staleSource = test::okResult("blocktile1d_bm128_bn64_bk8_tm8", 4096, 4096, 4096, 30000);
  staleSource.key.sourceHash = std::string(64, '0');
  auto staleNvrtc = test::okResult("blocktile1d_bm64_bn128_bk8_tm8", 4096, 4096, 4096, 29000);
  staleNvrtc.key.nvrtcVersion = "11.0";
  auto staleDriver = test::okResult("blocktile1d_bm32_bn64_bk8_tm8", 4096, 4096, 4096, 28000);
  staleDriver.key.driverVersion = 12000;
  auto staleMethod = test::okResult("blocktile1d_bm64_bn32_bk8_tm8", 4096, 4096, 4096, 27000);
  staleMethod.key.methodVersion = "tune0.time0.verify0";
  for (const auto* r : {&staleSource, &staleNvrtc, &staleDriver, &staleMethod}) ASSERT_TRUE(store.recordResult(run, *r));
  add("smem_bs32", 4096, 4096, 4096, 9000);
  Lookup lookup(store, present());
  auto r = lookup.best(gpu, {4096, 4096, 4096});
  EXPECT_EQ(r.quality, MatchQuality::exact);
  EXPECT_EQ(r.instance, "smem_bs32");
  EXPECT_DOUBLE_EQ(r.gflops, 9000);

  StoredKeyParts parts{staleNvrtc.key.driverVersion, staleNvrtc.key.nvrtcVersion, staleNvrtc.key.compileOptions,
                       staleNvrtc.key.sourceHash, staleNvrtc.key.methodVersion};
  Config c = FamilyRegistry::builtin().parseName("blocktile1d_bm64_bn128_bk8_tm8");
  auto reasons = staleReasons(parts, &c.family->name, present());
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_EQ(reasons[0].rfind("NVRTC 11.0 (now ", 0), 0u) << reasons[0];
}

// An untuned size whose nearest tuned size holds more stale rows (an older NVRTC) than a lookup
// reads at first, all faster than its one current row: the lookup reads on and finds that row
// (a lookup that stopped at the first 16 answered none, and sgemm() fell back to the default).
TEST_F(dbLookup, NearestSizeReadsPastItsFastestRowsWhenTheyAreAllStale) {
  int n = 0;
  for (int bm : {32, 64, 128})
    for (int bn : {32, 64})
      for (int tm : {8, 16, 32}) {
        auto stale = test::okResult(fmt::format("blocktile1d_bm{}_bn{}_bk8_tm{}", bm, bn, tm), 2048, 2048, 2048, 30000 + n++);
        stale.key.nvrtcVersion = "11.0";
        ASSERT_TRUE(store.recordResult(run, stale));
      }
  ASSERT_GT(n, 16);
  add("smem_bs32", 2048, 2048, 2048, 9000);
  Lookup lookup(store, present());
  auto r = lookup.best(gpu, {2000, 2000, 2000});
  EXPECT_EQ(r.quality, MatchQuality::nearest_size);
  EXPECT_EQ(r.instance, "smem_bs32_guarded");
}

TEST_F(dbLookup, RowsFailingRevalidationAreSkipped) {
  // Unknown family, a name that does not parse, an unguarded kernel at a size its tiles do not
  // divide, a row whose launch geometry contradicts the family: all faster than the valid row,
  // none may be served.
  auto unknown = test::okResult("smem_bs32_guarded", 2000, 2000, 2000, 99000);
  unknown.key.instance = "warptile_bm128";
  auto garbled = test::okResult("smem_bs32_guarded", 2000, 2000, 2000, 98000);
  garbled.key.instance = "blocktile1d_bm64'; --";
  auto unguarded = test::okResult("blocktile1d_bm128_bn64_bk8_tm8", 2000, 2000, 2000, 97000);
  auto contradicting = test::okResult("blocktile1d_bm64_bn128_bk8_tm8_guarded", 2000, 2000, 2000, 96000);
  contradicting.threadsPerBlock = 4096;
  for (const auto* r : {&unknown, &garbled, &unguarded, &contradicting}) ASSERT_TRUE(store.recordResult(run, *r));
  add("blocktile1d_bm64_bn64_bk8_tm8_guarded", 2000, 2000, 2000, 17000);
  Lookup lookup(store, present());
  auto r = lookup.best(gpu, {2000, 2000, 2000});
  EXPECT_EQ(r.quality, MatchQuality::exact);
  EXPECT_EQ(r.instance, "blocktile1d_bm64_bn64_bk8_tm8_guarded");
  EXPECT_DOUBLE_EQ(r.gflops, 17000);
}

// The bound is the asked GPU's: without its SM clock nothing is refused for speed, and an answer
// memoised for one clock is not reused for another.
TEST_F(dbLookup, ImplausiblyFastRowsAreSkippedWhereTheGpuHasABound) {
  add("blocktile1d_bm64_bn64_bk8_tm8", 4096, 4096, 4096, 1e9);
  add("smem_bs32", 4096, 4096, 4096, 9000);
  Lookup lookup(store, present());
  ASSERT_EQ(gpu.clockKhz, 0);
  EXPECT_EQ(lookup.best(gpu, {4096, 4096, 4096}).instance, "blocktile1d_bm64_bn64_bk8_tm8");
  GpuSpec clocked = gpu;  // the same fingerprint: the SM clock is not part of it
  clocked.clockKhz = 1980000;
  auto r = lookup.best(clocked, {4096, 4096, 4096});
  EXPECT_EQ(r.quality, MatchQuality::exact);
  EXPECT_EQ(r.instance, "smem_bs32");
  EXPECT_DOUBLE_EQ(r.gflops, 9000);
}

TEST(dbLookupRule, LaunchProblemNamesTheLimit) {
  GpuSpec gpu = test::testGpu();
  StoredResult row;
  const ProblemKey at{1024, 1024, 1024};
  Config big = FamilyRegistry::builtin().parseName("blocktile1d_bm128_bn128_bk128_tm16");  // > 128 KiB, 1024 threads
  const int bigSmem = big.family->dynamicSmemBytes(big);
  EXPECT_FALSE(launchProblem(big, row, gpu, at).has_value());
  gpu.smemPerBlockOptin = 100 * 1024;
  EXPECT_EQ(launchProblem(big, row, gpu, at).value_or(""),
            fmt::format("{} B > 102400 B opt-in maximum per block (smem)", bigSmem));
  gpu = test::testGpu();
  gpu.maxThreadsPerBlock = 256;
  EXPECT_EQ(launchProblem(big, row, gpu, at).value_or(""), "1024 > 256 per block (threads)");
  row.registers = 255;
  Config mid = FamilyRegistry::builtin().parseName("blocktile1d_bm64_bn64_bk8_tm8");  // 512 threads
  EXPECT_EQ(launchProblem(mid, row, test::testGpu(), at).value_or(""), "255×512 → 131072 allocated > 65536 per block (regs)");
  row.registers = 64;
  EXPECT_FALSE(launchProblem(mid, row, test::testGpu(), at).has_value());
  // The unguarded form at a size its tiles do not divide: the launch plan refuses it.
  EXPECT_NE(launchProblem(mid, row, test::testGpu(), {1000, 1024, 1024}).value_or("").find("unguarded form"),
            std::string::npos);
}

TEST_F(dbLookup, OversizedKernelIsSkippedOnAGpuWithSmallerLimits) {
  GpuSpec small = gpu;
  small.smemPerBlockOptin = 100 * 1024;  // part of the fingerprint: record under this GPU
  auto smallRun = store.beginRun(test::testRun(small));
  ASSERT_TRUE(store.recordResult(smallRun, test::okResult("blocktile1d_bm128_bn128_bk128_tm16", 2048, 2048, 2048, 97000, small)));
  ASSERT_TRUE(store.recordResult(smallRun, test::okResult("blocktile1d_bm64_bn64_bk8_tm8", 2048, 2048, 2048, 17000, small)));
  Lookup lookup(store, present());
  auto r = lookup.best(small, {2048, 2048, 2048});
  EXPECT_EQ(r.quality, MatchQuality::exact);
  EXPECT_EQ(r.instance, "blocktile1d_bm64_bn64_bk8_tm8");
}

TEST_F(dbLookup, NoRowsOrUnknownGpuGivesNone) {
  Lookup lookup(store, present());
  EXPECT_EQ(lookup.best(gpu, {4096, 4096, 4096}).quality, MatchQuality::none);
  add("smem_bs32", 4096, 4096, 4096, 9000);
  Lookup fresh(store, present());
  EXPECT_EQ(fresh.best(test::testGpu(66), {4096, 4096, 4096}).quality, MatchQuality::none);
  EXPECT_FALSE(fresh.best(test::testGpu(66), {4096, 4096, 4096}).config.has_value());
}

TEST_F(dbLookup, WarmLookupsAreMemoisedUntilCleared) {
  add("smem_bs32", 4096, 4096, 4096, 9000);
  Lookup lookup(store, present());
  EXPECT_EQ(lookup.best(gpu, {4096, 4096, 4096}).instance, "smem_bs32");
  add("blocktile1d_bm64_bn64_bk8_tm8", 4096, 4096, 4096, 17000);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(lookup.best(gpu, {4096, 4096, 4096}).instance, "smem_bs32");
  EXPECT_EQ(lookup.computedCount(), 1u);
  lookup.clear();
  EXPECT_EQ(lookup.best(gpu, {4096, 4096, 4096}).instance, "blocktile1d_bm64_bn64_bk8_tm8");
  EXPECT_EQ(lookup.computedCount(), 2u);
}

TEST(dbLookupRule, SpeedBoundIsThePeakOfTheGpuAndItsPrecisionClass) {
  const GpuSpec h100 = findGpuProfile("h100")->spec;  // 132 SMs, 1980 MHz, sm_90
  auto peak = peakRate(h100, PrecisionClass::strict);
  ASSERT_TRUE(peak.has_value());
  EXPECT_NEAR(peak->gflops, 132 * 128 * 2 * 1.98, 1e-9);  // 66 908 GFLOP/s
  EXPECT_NEAR(peak->gflops / 1000, 66.9, 0.05);
  EXPECT_EQ(peak->formula, "132 SMs × 128 FP32 lanes × 2 FLOP × 1980 MHz");
  // Half the lanes per SM on sm_80 and sm_7x: an A100 peaks at 19.5 TFLOP/s.
  EXPECT_NEAR(peakRate(findGpuProfile("a100")->spec, PrecisionClass::strict)->gflops, 19491.84, 1e-6);
  EXPECT_EQ(fp32LanesPerSm(7, 5), 64);
  EXPECT_EQ(fp32LanesPerSm(8, 6), 128);
  EXPECT_EQ(fp32LanesPerSm(12, 0), 128);
  // Without the clock, the SM count or a known architecture there is no bound.
  GpuSpec noClock = h100;
  noClock.clockKhz = 0;
  GpuSpec noSms = h100;
  noSms.smCount = 0;
  GpuSpec unknownArch = h100;
  unknownArch.ccMajor = 0;
  for (const GpuSpec* g : {&noClock, &noSms, &unknownArch}) EXPECT_FALSE(peakRate(*g, PrecisionClass::strict));
}

TEST(dbLookupRule, ImplausibleSpeedJudgesTheStoredRateAndTheMedianTime) {
  const GpuSpec h100 = findGpuProfile("h100")->spec;
  const double bound = kSpeedMargin * peakRate(h100, PrecisionClass::strict)->gflops;  // 73 599 GFLOP/s
  StoredResult row;
  static_cast<ResultRecord&>(row) = test::okResult("blocktile1d_bm64_bn64_bk8_tm8", 4096, 4096, 4096, 60000, h100);
  EXPECT_FALSE(implausibleSpeed(row, h100, PrecisionClass::strict)) << "cuBLAS-class speed: 90 % of peak";
  row.gflops = bound * 0.999;
  EXPECT_FALSE(implausibleSpeed(row, h100, PrecisionClass::strict));
  row.gflops = 1e9;
  EXPECT_EQ(implausibleSpeed(row, h100, PrecisionClass::strict).value_or(""),
            "implausible speed: 1e+09 GFLOP/s stored, above the 73599 GFLOP/s that NVIDIA H100 80GB HBM3 can "
            "reach in strict FP32 (1.1 × its 66908 GFLOP/s peak: 132 SMs × 128 FP32 lanes × 2 FLOP × 1980 MHz)");
  // A plausible stored rate beside an absurd median time: the time is judged too.
  row.gflops = 17000;
  row.medianMs = 1e-6;
  EXPECT_NE(implausibleSpeed(row, h100, PrecisionClass::strict).value_or("").find("from its median time of 1e-06 ms"),
            std::string::npos);
  row.medianMs = 0;
  EXPECT_TRUE(implausibleSpeed(row, h100, PrecisionClass::strict));
  row.medianMs.reset();
  row.gflops = std::nan("");
  EXPECT_TRUE(implausibleSpeed(row, h100, PrecisionClass::strict)) << "NaN sorts first in PostgreSQL";
  row.gflops.reset();
  EXPECT_FALSE(implausibleSpeed(row, h100, PrecisionClass::strict)) << "no claim, nothing to refuse";
  // A GPU without a bound refuses nothing.
  row.gflops = 1e9;
  GpuSpec noClock = h100;
  noClock.clockKhz = 0;
  EXPECT_FALSE(implausibleSpeed(row, noClock, PrecisionClass::strict));
}

// A board that boosts past its rated clock: a row timed there is judged at the clock it was timed
// at (up to kMaxClockOverRated × rated), so a genuine winner is not refused for being fast.
TEST(dbLookupRule, ARowTimedAboveTheRatedClockIsJudgedAtItsOwnClock) {
  GpuSpec board = findGpuProfile("h100")->spec;
  board.name = "a board rated 1582 MHz";
  board.smCount = 28;
  board.ccMajor = 6, board.ccMinor = 1;  // 128 FP32 lanes per SM
  board.clockKhz = 1582000;              // peak 11 341 GFLOP/s, bound 12 475
  StoredResult row;
  static_cast<ResultRecord&>(row) = test::okResult("blocktile1d_bm64_bn64_bk8_tm8", 4096, 4096, 4096, 12500, board);
  row.medianMs.reset();
  row.smClockMHz.reset();
  EXPECT_TRUE(implausibleSpeed(row, board, PrecisionClass::strict)) << "above the bound at the rated clock";
  row.smClockMHz = 1900;  // bound 1.1 × 28 × 128 × 2 × 1.9 GHz = 14 981 GFLOP/s
  EXPECT_FALSE(implausibleSpeed(row, board, PrecisionClass::strict)) << "fails before: judged at the rated clock";
  // A stored clock is data too: counted up to 1.5 × the rated clock (bound 18 712 GFLOP/s).
  row.smClockMHz = 100000;
  row.gflops = 18000;
  EXPECT_FALSE(implausibleSpeed(row, board, PrecisionClass::strict));
  row.gflops = 19000;
  EXPECT_NE(implausibleSpeed(row, board, PrecisionClass::strict).value_or("").find("2373 MHz"), std::string::npos);
}

// Layouts and batches (issue 27): the memo tells batches apart, an untuned layout or batch is
// served from the nearest evidence in a fixed order, and a row whose instance reads another
// layout than its row names is skipped.
TEST_F(dbLookup, BatchesAreAnsweredApartAndUntunedOnesFallBackInOrder) {
  auto addAt = [&](const std::string& instance, const char* layout, long long batch, double gflops) {
    db::ResultRecord r = test::okResult(instance, 512, 512, 512, gflops);
    r.key.problem.layout = layout;
    r.key.problem.batch = batch;
    ASSERT_TRUE(store.recordResult(run, r));
  };
  addAt("smem_bs32", "nn", 1, 9000);
  addAt("blocktile1d_bm64_bn64_bk8_tm8_tn", "tn", 1, 15000);
  addAt("blocktile1d_bm128_bn64_bk8_tm8", "nn", 64, 20000);
  Lookup lookup(store, present());
  const auto one = lookup.best(gpu, {512, 512, 512, "nn", "any", 1});
  const auto batched = lookup.best(gpu, {512, 512, 512, "nn", "any", 64});
  EXPECT_EQ(one.instance, "smem_bs32");
  EXPECT_EQ(batched.quality, MatchQuality::exact);
  EXPECT_EQ(batched.instance, "blocktile1d_bm128_bn64_bk8_tm8");
  EXPECT_EQ(lookup.computedCount(), 2u);  // the memo key holds the batch
  // tn batch 64: no row; tn unbatched comes first, in the asked layout.
  const auto tnBatched = lookup.best(gpu, {512, 512, 512, "tn", "any", 64});
  EXPECT_EQ(tnBatched.quality, MatchQuality::nearest_size);
  EXPECT_EQ(tnBatched.instance, "blocktile1d_bm64_bn64_bk8_tm8_tn");
  EXPECT_NE(tnBatched.reason.find("measured as 512 tn"), std::string::npos) << tnBatched.reason;
  // nt: nothing of nt at all; nn at the same batch before nn unbatched, run as nt.
  const auto ntBatched = lookup.best(gpu, {512, 512, 512, "nt", "any", 64});
  EXPECT_EQ(ntBatched.instance, "blocktile1d_bm128_bn64_bk8_tm8_nt");
  EXPECT_NE(ntBatched.reason.find("measured as 512 batch 64"), std::string::npos) << ntBatched.reason;
  EXPECT_EQ(lookup.best(gpu, {512, 512, 512, "nt", "any", 1}).instance, "smem_bs32_nt");
}

TEST_F(dbLookup, ARowWhoseInstanceReadsAnotherLayoutIsSkipped) {
  db::ResultRecord r = test::okResult("smem_bs32", 512, 512, 512, 9000);  // an nn kernel ...
  r.key.problem.layout = "tn";                                              // ... stored as tn
  ASSERT_TRUE(store.recordResult(run, r));
  Lookup lookup(store, present());
  EXPECT_EQ(lookup.best(gpu, {512, 512, 512, "tn", "any", 1}).quality, MatchQuality::none);
}
