// The nearest lookup's candidates: each measured size offers its 8 fastest rows and every
// family's fastest row. A family that is never among the fastest where it was measured can be the
// fastest elsewhere: streamk one wave, where cutlass's large tile leaves most SMs idle.
// Run: ctest -R dbLookupFamilies
#include <gtest/gtest.h>

#include <string>

#include "Database.hpp"
#include "Lookup.hpp"
#include "PresentEnvironment.hpp"
#include "SqliteStore.hpp"
#include "db_test_support.hpp"
#include "scratch_dir.hpp"

using namespace gemmtune;
using namespace gemmtune::db;
using namespace gemmtune::serving;

namespace {

struct FamilyLookup : ::testing::Test {
  test::ScratchDir dir;
  Database db{dir / "tune.db", {OpenMode::ReadWrite, OpenCheck::Quick}};
  SqliteStore store{db};
  GpuSpec gpu = [] {
    GpuSpec g = test::testGpu();
    g.clockKhz = 1980000;
    return g;
  }();
  std::int64_t run = store.beginRun(test::testRun(gpu));

  void add(const std::string& instance, long long size, double ms, int registers) {
    ResultRecord r = test::okResult(instance, size, size, size, 2.0 * size * size * size / (ms * 1e6), gpu);
    r.registers = registers;
    ASSERT_TRUE(store.recordResult(run, r));
  }
  PresentEnvironment present() {
    PresentEnvironment p = serving::presentEnvironment();
    p.driverVersion = test::kDriver;
    return p;
  }
};

}  // namespace

// At 2048³ nine cutlass 128×256 programs (one block per SM: 128 tiles, one wave) run 5 % ahead of
// streamk's one. At 1619×1367×1092 cutlass's tile leaves 78 tiles for 132 SMs, and streamk's wave
// shares every k step: streamk is predicted faster there, but only if its row is offered.
TEST_F(FamilyLookup, AFamilyBehindTheFastestRowsIsStillACandidate) {
  for (int stages : {3, 4, 5})
    for (int swizzle : {1, 2, 4})
      add("cutlass_bm128_bn256_bk8_wm64_wn64_st" + std::to_string(stages) + "_sw" + std::to_string(swizzle) + "_sk1",
          2048, 0.360, 255);
  add("streamk_bm128_bn128_bk8_wm64_wn64_st3_sw4", 2048, 0.378, 255);
  Lookup lookup(store, present(), LookupPolicy{false, 1.10});
  const auto r = lookup.best(gpu, {1619, 1367, 1092});
  ASSERT_EQ(r.quality, MatchQuality::nearest_size) << r.reason;
  ASSERT_TRUE(r.config);
  EXPECT_EQ(r.config->family->name, "streamk") << r.instance << ": " << r.reason;
  EXPECT_EQ(r.measuredProblem, (ProblemKey{2048, 2048, 2048}));
  // At a size of whole waves for both, the nine rows' family keeps it.
  EXPECT_EQ(lookup.best(gpu, {2048, 2048, 1536}).config->family->name, "cutlass");
}

// Every row of a competing program is its evidence, not only the rows where it was among the
// fastest. At 2048³ the 64×256 program ran fastest; at 1792³, nearer the asked size, nine 128×256
// rows ran ahead of it and it was slower than there. Calibrated from 2048³ alone it would be
// predicted fastest at 1800³; its own row at 1792³ says otherwise.
TEST_F(FamilyLookup, AProgramIsCalibratedFromItsRowsWhereItWasNotAmongTheFastest) {
  const std::string wide = "cutlass_bm64_bn256_bk8_wm32_wn64_st4_sw4_sk1";
  for (int stages : {3, 4, 5})
    for (int swizzle : {1, 2, 4}) {
      const std::string tall =
          "cutlass_bm128_bn256_bk8_wm64_wn64_st" + std::to_string(stages) + "_sw" + std::to_string(swizzle) + "_sk1";
      add(tall, 2048, 0.360, 255);
      add(tall, 1792, 0.250, 255);
    }
  add(wide, 2048, 0.300, 128);
  add(wide, 1792, 0.400, 128);
  Lookup lookup(store, present(), LookupPolicy{false, 1.10});
  const auto r = lookup.best(gpu, {1800, 1800, 1800});
  ASSERT_EQ(r.quality, MatchQuality::nearest_size) << r.reason;
  EXPECT_NE(r.instance, wide) << r.reason;
  EXPECT_EQ(r.measuredProblem, (ProblemKey{1792, 1792, 1792})) << r.instance << ": " << r.reason;
}
