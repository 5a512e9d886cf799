// The family model (model/FamilyModel, serving/NearestChoice) and the lookup's choice for
// unmeasured shapes with it (issue 28): a GEMV is priced by DRAM bandwidth, a skinny long-K shape
// with few tiles wants its K split, calibration follows the measured rows; a skinny shape is
// served by thin with split-K where the database's thin rows say so; cuBLAS is the answer where
// its baselines predict it faster beyond the margin, never when the policy leaves it out.
// Run: ctest -R dbLookupModel
#include <fmt/format.h>

#include <cmath>

#include "CompileResult.hpp"
#include "Database.hpp"
#include "FamilyModel.hpp"
#include "FamilyRegistry.hpp"
#include "Lookup.hpp"
#include "NearestChoice.hpp"
#include "PresentEnvironment.hpp"
#include "SqliteStore.hpp"
#include "db_test_support.hpp"
#include "cublas_test_support.hpp"

using namespace gemmtune;
using namespace gemmtune::db;
using namespace gemmtune::serving;
using gemmtune::test::ScratchDir;

namespace {

// The test H100 with its SM clock: 132 × 128 × 2 × 1.98 GHz = 66.9 TFLOP/s, 3352 GB/s.
GpuSpec clockedGpu() {
  GpuSpec g = test::testGpu();
  g.clockKhz = 1980000;
  return g;
}

const std::string kThin = "thin_bm16_bn64_bk32_tm2_tn4_st4_sk8";
const std::string kWarptile = "warptile_bm64_bn64_bk16_wm32_wn32_wni1_tm8_tn4_t128";

struct ModelLookup : ::testing::Test {
  ScratchDir dir;
  Database db{dir / "tune.db", {OpenMode::ReadWrite, OpenCheck::Quick}};
  SqliteStore store{db};
  GpuSpec gpu = clockedGpu();
  std::int64_t run = store.beginRun(test::testRun(gpu));

  PresentEnvironment present() {
    PresentEnvironment p = serving::presentEnvironment();
    p.driverVersion = test::kDriver;
    return p;
  }
  void addMs(const std::string& instance, long long m, long long n, long long k, double ms) {
    ASSERT_TRUE(store.recordResult(run, test::okResult(instance, m, n, k, 2.0 * m * n * k / (ms * 1e6), gpu)));
  }
  void addCublas(long long m, long long n, long long k, double ms) {
    ASSERT_TRUE(store.recordResult(run, test::cublasResult("nn", m, n, k, 2.0 * m * n * k / (ms * 1e6), gpu)));
  }
  void addBaseline(long long m, long long n, long long k, double ms) {
    BaselineRecord b;
    b.libraryVersion = "13.0";
    b.problem = {m, n, k};
    b.medianMs = ms;
    ASSERT_TRUE(store.recordBaseline(run, b));
  }
  // Square sizes, where warptile wins, and one skinny size, where thin with 8 K slices does.
  void addSquareAndSkinnyRows() {
    addMs(kWarptile, 1024, 1024, 1024, 0.110);
    addMs(kThin, 1024, 1024, 1024, 0.400);
    addMs(kWarptile, 16, 4096, 4096, 0.150);
    addMs(kThin, 16, 4096, 4096, 0.030);
  }
};

}  // namespace

TEST(dbLookupModelRule, AGemvIsPricedByDramBandwidth) {
  const MachineRates h100 = machineRatesOf(clockedGpu());
  ASSERT_NEAR(h100.dramGBps, 3352.3, 0.1);
  ASSERT_NEAR(h100.peakGflops, 66908, 1);
  const ProblemKey gemv{4096, 1, 4096};
  KernelGeometry g;
  g.blocks = 64 * 16;  // 64-row tiles, 16 K slices of 256
  g.residency = Residency{8, 2};
  g.tileM = 64;
  g.tileN = 8;
  g.slices = 16;
  // A read once (64 MiB) dominates: 20 µs of DRAM against about 4 µs each for the arithmetic (one
  // wave of 8 blocks per SM) and the 256-deep k loops. Unsplit, the 4096-deep k loop (61 µs) would
  // bind instead: a GEMV is memory-bound only with K split.
  const double bytes = 4.0 * (4096.0 * 4096 + 4096 + 2 * 4096);
  EXPECT_DOUBLE_EQ(compulsoryBytes(gemv), bytes);
  EXPECT_NEAR(rawMs(gemv, g, h100), bytes / (h100.dramGBps * 1e6) + h100.launchOverheadMs, 1e-12);
  EXPECT_NEAR(rooflineMs(gemv, h100), bytes / (h100.dramGBps * 1e6) + h100.launchOverheadMs, 1e-12);
}

// 17x3605x3312: B (48 MB) is larger than half the H100's 50 MB L2, so every row of tiles streams
// it from DRAM again (in other waves). Priced by compulsory bytes alone, thin's 8-row tile (3 rows of tiles) looked
// as fast as its 32-row one, was served there, and ran at 0.43x cuBLAS on an H100.
TEST(dbLookupModelRule, AnOperandLargerThanL2IsStreamedOncePerRowOfTiles) {
  const MachineRates h100 = machineRatesOf(clockedGpu());
  ASSERT_EQ(h100.l2Bytes, 50.0 * 1024 * 1024);
  const ProblemKey skinny{17, 3605, 3312};
  auto tile = [](long long rows, long long columns) {
    KernelGeometry g;
    g.tileM = rows;
    g.tileN = columns;
    return g;
  };
  const double b = 4.0 * 3312 * 3605;
  EXPECT_DOUBLE_EQ(streamedBytes(skinny, tile(32, 16), h100), compulsoryBytes(skinny));  // A stays in L2
  EXPECT_DOUBLE_EQ(streamedBytes(skinny, tile(8, 32), h100), compulsoryBytes(skinny) + 2 * b);
  EXPECT_GT(rawMs(skinny, tile(8, 32), h100), 2 * rawMs(skinny, tile(32, 16), h100));
  const ProblemKey tall{3312, 17, 3605};  // the mirror: A streamed once per column of tiles
  EXPECT_DOUBLE_EQ(streamedBytes(tall, tile(16, 8), h100), compulsoryBytes(tall) + 2 * 4.0 * 3312 * 3605);
  // Both operands too large (4096³, 64 MiB each): the grid's order keeps one in L2, so only the
  // cheaper is streamed again (A, over 64 columns of tiles, not B over 128 rows); and a pass at most
  // once per wave (8192 blocks, 8 per SM: 8 waves), as one wave's blocks share what they read.
  const ProblemKey cube{4096, 4096, 4096};
  const double operand = 4.0 * 4096 * 4096;
  EXPECT_DOUBLE_EQ(streamedBytes(cube, tile(32, 64), h100), compulsoryBytes(cube) + 63 * operand);
  KernelGeometry waves = tile(32, 64);
  waves.blocks = 128 * 64;
  waves.residency = Residency{8, 4};
  EXPECT_DOUBLE_EQ(streamedBytes(cube, waves, h100), compulsoryBytes(cube) + 7 * operand);
  // 8 such matrices in one grid (batches outermost): still 8 waves, 7 passes, per matrix.
  ProblemKey cubes = cube;
  cubes.batch = 8;
  waves.blocks *= 8;
  EXPECT_DOUBLE_EQ(streamedBytes(cubes, waves, h100), compulsoryBytes(cubes) + 8 * 7 * operand);
  MachineRates unknownL2 = h100;
  unknownL2.l2Bytes = 0;
  EXPECT_DOUBLE_EQ(streamedBytes(skinny, tile(8, 32), unknownL2), compulsoryBytes(skinny));
}

// One small tile over a long K (5x13x2098, thin's 8x32 tile unsliced): about 1 MFLOP and 150 KB,
// yet the block walks 2098 steps of K one load after another. Priced by the k loop (15 ns a step),
// not by the arithmetic at the peak: without it such launches ran 2-3x slower on an H100 than the
// model said, and it served these shapes with 16 K slices at 0.4-0.6x cuBLAS.
TEST(dbLookupModelRule, ASmallTileOverALongKIsPricedByItsKLoop) {
  const MachineRates h100 = machineRatesOf(clockedGpu());
  const ProblemKey tiny{5, 13, 2098};
  KernelGeometry g;
  g.blocks = 1;
  g.residency = Residency{8, 2};
  g.tileM = 8;
  g.tileN = 32;
  EXPECT_NEAR(rawMs(tiny, g, h100), 2098 * 15e-6 + h100.launchOverheadMs, 1e-12);
  g.blocks = 8;  // 8 slices: one wave of 263-deep k loops
  g.slices = 8;
  EXPECT_NEAR(rawMs(tiny, g, h100), 263 * 15e-6 + h100.launchOverheadMs, 1e-12);
}

// Small tiles read the same panels many times from L2: thin's 32×16 tile reads A (19 MB at
// 2859x80x1665) once per column of tiles, 143 MB there against 102 MB at 2000x40x3001, where its
// k loop's latency floor priced it. Without the L2 term it was predicted a third faster at the
// larger shape than at the anchor, served over cuBLAS, and ran 18 % slower there on an H100 (0.68x
// cuBLAS). The L2 traffic: 4·K·(M·⌈N/BN⌉ + N·⌈M/BM⌉).
TEST(dbLookupModelRule, SmallTilesPayForReadingTheirPanelsFromL2) {
  const GpuSpec gpu = clockedGpu();
  const MachineRates h100 = machineRatesOf(gpu);
  EXPECT_NEAR(h100.l2GBps, kL2BytesPerSmClock * gpu.smCount * gpu.clockKhz / 1e6, 1e-9);
  EXPECT_EQ(machineRatesOf(gpu, PrecisionClass::faithful).l2GBps, 0);  // scored on the FP32 families only
  KernelGeometry g;
  g.tileM = 32;
  g.tileN = 16;
  EXPECT_DOUBLE_EQ(l2TrafficBytes({2859, 80, 1665}, g), 4.0 * 1665 * (2859.0 * 5 + 80.0 * 90));
  const Config thin = FamilyRegistry::builtin().parseName("thin_bm32_bn16_bk32_tm2_tn2_st4_sk2_guarded");
  const StoredResult row;
  const ProblemKey anchor{2000, 40, 3001}, asked{2859, 80, 1665};
  const auto atAnchor = geometryOf(thin, row, gpu, anchor), atAsked = geometryOf(thin, row, gpu, asked);
  ASSERT_TRUE(atAnchor && atAsked);
  MachineRates withoutL2 = h100;
  withoutL2.l2GBps = 0;
  EXPECT_LT(rawMs(asked, *atAsked, withoutL2) / rawMs(anchor, *atAnchor, withoutL2), 0.7);
  EXPECT_GT(rawMs(asked, *atAsked, h100) / rawMs(anchor, *atAnchor, h100), 0.8);
}

// A block's prologue and epilogue cost its k loop over kBlockFixedK more elements of K at every
// slice: with 2 slices of K = 55 (28 elements each) clusterk's 128×256 tile does over twice its k
// loop's work per block, where at 1024³ (512 elements a slice) it adds 6 %. Without it that tile,
// calibrated at 1024³, was picked at 1476x3089x55 and ran at 0.61x cuBLAS on an H100, cutlass's
// 64×128 unsliced 0.88x.
TEST(dbLookupModelRule, AShortKSliceCostsItsBlocksPrologueAndEpilogue) {
  const MachineRates h100 = machineRatesOf(clockedGpu());
  KernelGeometry g;
  g.blocks = 1;
  g.residency = Residency{1, 8};
  g.tileM = 128;
  g.tileN = 256;
  g.slices = 2;
  const ProblemKey shortK{128, 256, 55};
  const double perBlock = launchCost(1, g.residency, h100.smCount) * 2.0 * 128 * 256 / (h100.peakGflops / h100.smCount * 1e6);
  const double compute = rawMs(shortK, g, h100) - h100.launchOverheadMs;
  EXPECT_NEAR(compute, perBlock * (28 + kBlockFixedK), 1e-12);
  EXPECT_GT(compute, 2 * perBlock * 28);
}

// 16x1024x8192 with 16×64 tiles: 16 tiles on 132 SMs. Unsplit, each block runs the whole K alone;
// 8 slices make 128 blocks of an eighth of the work each, and the partial sums (8 × 16×1024) cost
// far less than the 7 idle SMs in 8 saved.
TEST(dbLookupModelRule, ASkinnyLongKShapeWithFewTilesIsFasterSplit) {
  const GpuSpec gpu = clockedGpu();
  const Config thin = FamilyRegistry::builtin().parseName(kThin);
  const StoredResult row;
  const ProblemKey skinny{16, 1024, 8192};
  std::vector<double> byVariant;
  for (const Config& v : thin.launchVariants()) byVariant.push_back(rawMsOf(v, row, gpu, skinny));
  ASSERT_EQ(byVariant.size(), 5u);  // SPLITK 1, 2, 4, 8, 16: one program
  EXPECT_GT(byVariant[0], 2 * *std::min_element(byVariant.begin() + 1, byVariant.end()));
  for (const Config& v : thin.launchVariants()) EXPECT_EQ(v.programKey(), thin.programKey());
  EXPECT_TRUE(thin.launchVariants()[0].sameProgram(thin));
  Config guarded = thin;
  guarded.guarded = true;
  EXPECT_EQ(guarded.programKey(), thin.programKey());  // the same tiles
  EXPECT_FALSE(guarded.sameProgram(thin));             // another binary
  const auto split = geometryOf(thin, row, gpu, skinny);
  ASSERT_TRUE(split);
  EXPECT_EQ(split->blocks, 16 * 8);
  EXPECT_GT(split->partialBytes, 2.0 * 8 * 16 * 1024 * 4);  // the partial tiles, written and read
}

// clusterk's two slices meet in the cluster's shared memory: no partial tiles through DRAM, where
// cutlass's serial split-K of the same tile reads and writes C once more.
TEST(dbLookupModelRule, ClusterSlicesMoveNoPartialTiles) {
  const GpuSpec gpu = clockedGpu();
  const StoredResult row;
  const ProblemKey p{1024, 1024, 1024};
  const auto cluster = geometryOf(FamilyRegistry::builtin().parseName("clusterk_bm128_bn128_bk8_wm64_wn64_st3_sw4_sk2"),
                                  row, gpu, p);
  const auto serial = geometryOf(FamilyRegistry::builtin().parseName("cutlass_bm128_bn128_bk8_wm64_wn64_st3_sw4_sk2"),
                                 row, gpu, p);
  ASSERT_TRUE(cluster && serial);
  EXPECT_EQ(cluster->slices, 2);
  EXPECT_EQ(cluster->partialBytes, 0);
  EXPECT_GT(serial->partialBytes, 0);
  EXPECT_EQ(cluster->blocks, serial->blocks);
}

// The split's reduction runs after the slices' arithmetic (cutlass: each later slice reads and
// writes C in turn; thin: the last block of a tile adds the partials), so its traffic adds to a
// compute-bound launch instead of hiding under it. Hidden under the max, more slices looked free
// wherever they evened out the waves: cutlass rows measured unsliced were picked with 2-8 slices at
// shapes like 3583x2736x1496 and ran at 0.65-0.88x cuBLAS on an H100. Added, cutlass's held-out
// error on a main job's rows fell from 20 % to 13 %. Here, with 128x128 tiles standing in: 4 slices
// no longer beat none, 2 still do (588 tiles fill 4.5 waves; 1176 fill 8.9).
TEST(dbLookupModelRule, TheReductionOfKSlicesAddsToAComputeBoundLaunch) {
  const MachineRates h100 = machineRatesOf(clockedGpu());
  const double bandwidth = h100.dramGBps * 1e6;  // bytes per ms
  const ProblemKey big{3584, 2688, 1536};
  auto split = [&](int slices) {
    KernelGeometry g;
    g.blocks = 28 * 21 * slices;
    g.residency = Residency{1, 8};
    g.tileM = 128;
    g.tileN = 128;
    g.slices = slices;
    g.partialBytes = slices > 1 ? (slices - 1) * 2.0 * 4 * 3584 * 2688 : 0;  // C read and written per later slice
    return g;
  };
  const KernelGeometry two = split(2);
  const double arithmetic = launchCost(two.blocks, two.residency, h100.smCount) * 2.0 * 128 * 128 * (768 + kBlockFixedK) /
                            (h100.peakGflops / h100.smCount * 1e6);
  // Compute-bound even with the partials counted as memory: the old max() left them out entirely.
  ASSERT_GT(arithmetic, (compulsoryBytes(big) + two.partialBytes) / bandwidth);
  EXPECT_NEAR(rawMs(big, two, h100), arithmetic + two.partialBytes / bandwidth + h100.launchOverheadMs, 1e-12);
  EXPECT_GT(rawMs(big, split(4), h100), rawMs(big, split(1), h100));
  EXPECT_LT(rawMs(big, split(2), h100), rawMs(big, split(1), h100));  // splitting still wins where the waves say so
}

// The tile comes from the family's plan, for every family: smem's parameter is BLOCKSIZE, and a
// model that guessed the tile from parameter names priced smem_bs16 at 4096³ as 1×4096 tiles
// (16× the work per block; found in review), cutlass's from BM/BN, with its K slices.
TEST(dbLookupModelRule, EveryFamilysTileComesFromItsPlan) {
  const GpuSpec gpu = clockedGpu();
  const StoredResult row;
  const auto smem = geometryOf(FamilyRegistry::builtin().parseName("smem_bs16"), row, gpu, {4096, 4096, 4096});
  ASSERT_TRUE(smem);
  EXPECT_EQ(smem->tileM, 16);
  EXPECT_EQ(smem->tileN, 16);
  EXPECT_EQ(smem->blocks, 256 * 256);
  EXPECT_EQ(smem->slices, 1);
  EXPECT_EQ(smem->tileK, 16);
  const auto cutlass = geometryOf(FamilyRegistry::builtin().parseName("cutlass_bm128_bn256_bk8_wm64_wn64_st4_sw4_sk4"),
                                  row, gpu, {4096, 4096, 4096});
  ASSERT_TRUE(cutlass);
  EXPECT_EQ(cutlass->tileM, 128);
  EXPECT_EQ(cutlass->tileN, 256);
  EXPECT_EQ(cutlass->slices, 4);
  EXPECT_EQ(cutlass->tileK, 8);
  EXPECT_EQ(cutlass->blocks, 32 * 16 * 4);
  // thin's slices and k tile come from its plan too (the lookup's slice rules read them there,
  // not from parameters named SPLITK and BK).
  const auto thin = geometryOf(FamilyRegistry::builtin().parseName(kThin), row, gpu, {16, 1024, 8192});
  ASSERT_TRUE(thin);
  EXPECT_EQ(thin->slices, 8);
  EXPECT_EQ(thin->tileK, 32);
}

TEST(dbLookupModelRule, CalibrationScalesWithTheMeasuredRows) {
  const ProblemKey asked{512, 512, 512}, anchor{1024, 1024, 1024}, near{512, 512, 256};
  const std::vector<Observation> own{{anchor, 2.0, 1.0}};
  EXPECT_DOUBLE_EQ(calibrationRatio(asked, own, own), 2.0);  // the family has nothing nearer
  // The family ran 1.5× its raw time at the anchor and 3× near the asked size: twice as far from
  // the model there, so this configuration is expected to be too.
  const std::vector<Observation> family{{anchor, 1.5, 1.0}, {near, 3.0, 1.0}, {anchor, 1.5, 1.0}};
  EXPECT_DOUBLE_EQ(calibrationRatio(asked, own, family), 4.0);
  // The correction is bounded; without own rows the family's ratio near the asked size is used.
  const std::vector<Observation> wild{{anchor, 1.0, 1.0}, {near, 100.0, 1.0}};
  EXPECT_DOUBLE_EQ(calibrationRatio(asked, own, wild), 2.0 * kMaxCorrection);
  EXPECT_DOUBLE_EQ(calibrationRatio(asked, {}, family), 3.0);
  EXPECT_DOUBLE_EQ(calibrationRatio(asked, {}, {}), 0.0);
}

TEST_F(ModelLookup, ASkinnyShapeIsServedByThinWithSplitK) {
  addSquareAndSkinnyRows();
  Lookup lookup(store, present(), LookupPolicy{false, 1.10});
  const auto r = lookup.best(gpu, {24, 3000, 6000});
  ASSERT_EQ(r.quality, MatchQuality::nearest_size) << r.reason;
  ASSERT_TRUE(r.config);
  EXPECT_EQ(r.config->family->name, "thin") << r.instance;
  EXPECT_GT((*r.config)["SPLITK"], 1) << r.instance;
  EXPECT_EQ(r.measuredProblem, (ProblemKey{16, 4096, 4096}));
  EXPECT_GT(r.predictedMs, 0);
  EXPECT_NE(r.reason.find("family model"), std::string::npos) << r.reason;
  EXPECT_EQ(r.reason.find("cuBLAS"), std::string::npos) << "policy without cuBLAS: " << r.reason;
  // Square sizes keep their winner.
  EXPECT_EQ(lookup.best(gpu, {1000, 1000, 1000}).config->family->name, "warptile");
}

// Another SPLITK is the same program: the row's binary is passed on, though the name differs.
TEST_F(ModelLookup, AnotherSplitKOfTheRowKeepsItsBinary) {
  addMs("thin_bm16_bn64_bk32_tm2_tn4_st4_sk1", 16, 1024, 1024, 0.010);
  Lookup lookup(store, present(), LookupPolicy{false, 1.10});
  const auto r = lookup.best(gpu, {16, 1024, 16384});  // 16 times deeper: worth splitting
  ASSERT_EQ(r.quality, MatchQuality::nearest_size) << r.reason;
  ASSERT_GT((*r.config)["SPLITK"], 1) << r.instance;
  EXPECT_NE(r.instance, r.measuredInstance);
  EXPECT_FALSE(r.cubin.empty());
  EXPECT_EQ(r.loweredNames, splitLoweredNames(test::okResult(r.measuredInstance, 1, 1, 1, 1).loweredName));
}

TEST_F(ModelLookup, CublasIsAnsweredWhereItsRowsPredictItFasterBeyondTheMargin) {
  addSquareAndSkinnyRows();
  addCublas(1024, 1024, 1024, 0.050);  // twice as fast as warptile's row
  Lookup lookup(store, present());
  const auto r = lookup.best(gpu, {1000, 1000, 1000});
  EXPECT_EQ(r.quality, MatchQuality::nearest_size);
  EXPECT_TRUE(r.cublas);
  EXPECT_FALSE(r.config);
  EXPECT_EQ(r.instance, "cublas_nn");
  EXPECT_EQ(r.measuredProblem, (ProblemKey{1024, 1024, 1024}));
  EXPECT_NEAR(r.predictedMs, 0.050 * rooflineMs({1000, 1000, 1000}, machineRatesOf(gpu)) /
                                 rooflineMs({1024, 1024, 1024}, machineRatesOf(gpu)), 1e-12);
  EXPECT_NE(r.reason.find("cuBLAS predicted"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("not faster by the 1.25 margin"), std::string::npos) << r.reason;
  // Where ours is predicted faster beyond the margin, ours; the reason names both. (Thin's 16x64
  // tiles divide this shape: a guarded form never measured would count double. One row of tiles:
  // at 32 rows its two would each stream B, 75 MB, from DRAM, and cuBLAS would be predicted faster.)
  const auto skinny = Lookup(store, present(), LookupPolicy{true, 1.10}).best(gpu, {16, 3072, 6144});
  EXPECT_FALSE(skinny.cublas) << skinny.reason;
  EXPECT_NE(skinny.reason.find("cuBLAS predicted"), std::string::npos) << skinny.reason;
  // Not with cuBLAS left out, nor when a family is asked for.
  EXPECT_FALSE(Lookup(store, present(), LookupPolicy{false, 1.10}).best(gpu, {1000, 1000, 1000}).cublas);
  EXPECT_FALSE(lookup.best(gpu, {1000, 1000, 1000}, "warptile").cublas);
}

// The baselines table is written whatever `tune --families` says: a database tuned without the
// cublas family holds baselines but no cuBLAS rows, and must not make cuBLAS a candidate.
TEST_F(ModelLookup, BaselinesAloneDoNotMakeCublasACandidate) {
  addSquareAndSkinnyRows();
  addBaseline(1024, 1024, 1024, 0.050);
  Lookup lookup(store, present());
  const auto r = lookup.best(gpu, {1000, 1000, 1000});
  EXPECT_FALSE(r.cublas) << r.reason;
  EXPECT_EQ(r.quality, MatchQuality::nearest_size);
}

// A guarded form never measured counts twice its predicted time: on an H100 a warppipe tile
// measured unguarded at 4096x4096x32 ran guarded at 0.55x cuBLAS where it was predicted faster.
TEST_F(ModelLookup, AnUnmeasuredGuardedFormCountsDouble) {
  addMs(kWarptile, 1024, 1024, 1024, 0.110);
  addCublas(1024, 1024, 1024, 0.200);  // cuBLAS 1.8x slower at 1024: ours wins where its tiles divide
  Lookup lookup(store, present(), LookupPolicy{true, 1.0});
  const auto divides = lookup.best(gpu, {960, 960, 1024});
  const auto ragged = lookup.best(gpu, {1000, 1000, 1000});
  EXPECT_FALSE(divides.cublas) << divides.reason;
  EXPECT_TRUE(ragged.cublas) << ragged.reason;  // the guarded form's time doubled: over cuBLAS's
  EXPECT_TRUE(Lookup(store, present(), LookupPolicy{false, 1.0}).best(gpu, {1000, 1000, 1000}).config->guarded);
}

// A row's calibration says little far from where it was measured: on an H100 a warppipe tile
// anchored at 4096x4096x32 (small K, where it beat cuBLAS 1.5x) was picked for 1619x1367x1092 and
// ran at 0.55x. Only programs anchored within kAnchorSlack of the nearest anchor compete.
TEST_F(ModelLookup, AProgramMeasuredOnlyFarAwayDoesNotCompeteWithOneMeasuredNear) {
  const std::string nearProgram = "warptile_bm128_bn64_bk16_wm32_wn32_wni2_tm4_tn4_t256";
  addMs(kWarptile, 4096, 4096, 32, 0.020);      // 54 TFLOP/s at small K: calibrated very fast
  addMs(nearProgram, 1024, 1024, 1024, 0.110);  // 20 TFLOP/s beside the asked shape
  const auto r = Lookup(store, present(), LookupPolicy{false, 1.25}).best(gpu, {1024, 1024, 1088});
  ASSERT_TRUE(r.config) << r.reason;
  EXPECT_EQ(r.instance, nearProgram) << r.reason;
  EXPECT_EQ(r.measuredProblem, (ProblemKey{1024, 1024, 1024}));
}

TEST_F(ModelLookup, OursWithinTheMarginOfCublasIsNotEnough) {
  addMs(kWarptile, 1024, 1024, 1024, 0.110);
  addCublas(1024, 1024, 1024, 0.105);  // ours 5 % slower there: cuBLAS
  Lookup lookup(store, present());
  EXPECT_TRUE(lookup.best(gpu, {960, 960, 1024}).cublas);
  Lookup generous(store, present(), LookupPolicy{true, 0.8});  // a margin below 1 lets ours be slower
  EXPECT_FALSE(generous.best(gpu, {960, 960, 1024}).cublas);  // 64x64 tiles divide it: unguarded
}

// More K slices than any row of the program was measured with count 1.5 times the prediction: on
// an H100 cutlass rows measured unsliced were picked with 2-8 slices at mid-size shapes and ran at
// 0.73-0.86x cuBLAS where the model had them 1.25x faster. Fewer slices than measured cost nothing.
TEST_F(ModelLookup, MoreKSlicesThanMeasuredCountOneAndAHalf) {
  const std::string unsliced = "cutlass_bm64_bn128_bk8_wm32_wn64_st5_sw4_sk1";
  addMs(unsliced, 1024, 1024, 1024, 0.060);
  Lookup lookup(store, present(), LookupPolicy{false, 1.0});
  // Two slices are predicted 1.4x faster here (0.083 against 0.116 ms): not enough.
  const auto midSize = lookup.best(gpu, {1024, 1024, 2048});
  ASSERT_TRUE(midSize.config) << midSize.reason;
  EXPECT_EQ((*midSize.config)["SPLITK"], 1) << midSize.reason;
  // 32 tiles of 64x128 want eight slices by far more: taken, and the reason says it counted them slower.
  const auto fewTiles = lookup.best(gpu, {512, 512, 2048});
  ASSERT_TRUE(fewTiles.config) << fewTiles.reason;
  EXPECT_EQ((*fewTiles.config)["SPLITK"], 8) << fewTiles.reason;
  EXPECT_NE(fewTiles.reason.find("counted slower: a guarded form, or more K slices, than measured"), std::string::npos)
      << fewTiles.reason;
  // Once a row of the program ran with two slices, two slices are measured: no penalty.
  addMs("cutlass_bm64_bn128_bk8_wm32_wn64_st5_sw4_sk2", 1024, 1024, 1024, 0.061);
  const auto measuredTwo = Lookup(store, present(), LookupPolicy{false, 1.0}).best(gpu, {1024, 1024, 2048});
  ASSERT_TRUE(measuredTwo.config) << measuredTwo.reason;
  EXPECT_EQ((*measuredTwo.config)["SPLITK"], 2) << measuredTwo.reason;
  EXPECT_EQ(measuredTwo.reason.find("counted slower"), std::string::npos) << measuredTwo.reason;
}

// Slices measured at another size lift the 1.5 penalty, but only slices measured at the anchor
// (where the calibration comes from) may face cuBLAS: thin's 8x32 tile, measured with 16 slices at
// 16x16x2048 and unsliced at 16x4096x4096, was served with 16 slices at 17x3605x3312 from the
// unsliced row and ran at 0.51x cuBLAS, 3.8x slower than predicted (an H100).
TEST_F(ModelLookup, SlicesMeasuredAtAnotherSizeLiftThePenaltyButDoNotFaceCublas) {
  addMs("cutlass_bm64_bn128_bk8_wm32_wn64_st5_sw4_sk1", 1024, 1024, 1024, 0.060);
  addMs("cutlass_bm64_bn128_bk8_wm32_wn64_st5_sw4_sk8", 64, 64, 8192, 0.050);  // far from the asked size
  addCublas(1024, 1024, 1024, 0.300);                                         // cuBLAS measured 5x slower
  const auto ours = Lookup(store, present(), LookupPolicy{false, 1.0}).best(gpu, {512, 512, 2048});
  ASSERT_TRUE(ours.config) << ours.reason;
  EXPECT_EQ((*ours.config)["SPLITK"], 8) << ours.reason;
  EXPECT_EQ(ours.measuredProblem, (ProblemKey{1024, 1024, 1024})) << ours.reason;
  EXPECT_EQ(ours.reason.find("counted slower"), std::string::npos) << ours.reason;
  const auto withCublas = Lookup(store, present(), LookupPolicy{true, 1.25}).best(gpu, {512, 512, 2048});
  EXPECT_TRUE(withCublas.cublas) << withCublas.reason;
}

// A pick with more K slices than its anchor row ran is never preferred to cuBLAS, however much
// faster the model says it is: on an H100 such thin picks, predicted 2.1-2.4x faster than cuBLAS,
// ran at 0.51-0.78x: not even where another candidate would beat cuBLAS (a warptile row here; the
// rule is blunt on purpose: see answerNearest). Where the pick runs a measured slice count
// (unsliced at 1024x1024x2048), ours still runs.
TEST_F(ModelLookup, MoreKSlicesThanMeasuredNeverWinOverCublas) {
  addMs("cutlass_bm64_bn128_bk8_wm32_wn64_st5_sw4_sk1", 1024, 1024, 1024, 0.060);
  addMs("warptile_bm128_bn64_bk16_wm32_wn32_wni2_tm4_tn4_t256", 1024, 1024, 1024, 0.070);
  addCublas(1024, 1024, 1024, 0.300);  // cuBLAS measured 5x slower
  Lookup lookup(store, present(), LookupPolicy{true, 1.25});
  const auto fewTiles = lookup.best(gpu, {512, 512, 2048});
  EXPECT_TRUE(fewTiles.cublas) << fewTiles.reason;
  EXPECT_NE(fewTiles.reason.find("ours runs more K slices than its program ran at 1024x1024x1024, cuBLAS runs it"),
            std::string::npos)
      << fewTiles.reason;
  const auto measured = lookup.best(gpu, {1024, 1024, 2048});
  EXPECT_FALSE(measured.cublas) << measured.reason;
}

// Fewer slices than the row's are never counted slower: thin measured with 8 slices, asked at a
// K where 8 would be too short, runs fewer at its predicted time.
TEST_F(ModelLookup, FewerKSlicesThanMeasuredAreNotCountedSlower) {
  addMs(kThin, 16, 4096, 4096, 0.030);
  const auto r = Lookup(store, present(), LookupPolicy{false, 1.0}).best(gpu, {16, 4096, 256});
  ASSERT_TRUE(r.config) << r.reason;
  EXPECT_LT((*r.config)["SPLITK"], 8) << r.reason;
  EXPECT_EQ(r.reason.find("counted slower"), std::string::npos) << r.reason;
}

// K slices shorter than four k tiles are never offered: on an H100 a cutlass row measured with 8
// slices at a long K served 9x1592x45 and 29x1848x24 at 0.37-0.40x cuBLAS. Slices are whole k tiles
// (BK 8 here): K 256 in 8 slices is 4 tiles each, offered; K 250 in 8 is 4 tiles too (32 tiles).
TEST_F(ModelLookup, KSlicesShorterThanFourKTilesAreNotOffered) {
  addMs("cutlass_bm64_bn256_bk8_wm32_wn64_st3_sw4_sk8", 512, 512, 8192, 0.080);
  Lookup lookup(store, present(), LookupPolicy{false, 1.0});
  for (long long k : {24LL, 45LL, 100LL, 250LL, 256LL}) {
    const auto r = lookup.best(gpu, {29, 1848, k});
    ASSERT_TRUE(r.config) << r.reason;
    const long long slices = (*r.config)["SPLITK"], tiles = (k + 7) / 8;
    EXPECT_TRUE(slices == 1 || (tiles + slices - 1) / slices >= 4) << "K " << k << ": " << r.reason;
  }
  EXPECT_EQ((*lookup.best(gpu, {29, 1848, 24}).config)["SPLITK"], 1);
  EXPECT_EQ((*lookup.best(gpu, {29, 1848, 256}).config)["SPLITK"], 8);  // the measured split, 4 tiles a slice
}
