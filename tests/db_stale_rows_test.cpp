// StaleRows: the rule `gemmtune results` and `gemmtune report` share — cache-key parts, the GPU
// fingerprint its model is tuned under now, a family column that must match the instance name,
// and rows rejected by a static constraint, whose names parseName() refuses.
// Run: ctest -R dbStaleRows
#include "PresentEnvironment.hpp"
#include "StaleRows.hpp"
#include "db_test_support.hpp"
#include "gemmtune/Errors.hpp"

using namespace gemmtune;
using namespace gemmtune::db;
using namespace gemmtune::serving;

namespace {

StoredResult stored(const ResultRecord& record, const GpuSpec& gpu = test::testGpu()) {
  StoredResult r;
  static_cast<ResultRecord&>(r) = record;
  r.gpuName = gpu.name;
  return r;
}

struct StaleRowsFixture : ::testing::Test {
  PresentEnvironment present = serving::presentEnvironment();
  CurrentFingerprints current{{test::testGpu().name, gpuFingerprint(test::testGpu())}};
  const Family& bt = *FamilyRegistry::builtin().find("blocktile1d");
};

}  // namespace

using dbStaleRows = StaleRowsFixture;

TEST_F(dbStaleRows, CurrentRowIsNotStale) {
  auto check = checkStoredRow(stored(test::okResult("blocktile1d_bm64_bn64_bk8_tm8", 4096, 4096, 4096, 17000)),
                              present, current);
  ASSERT_TRUE(check.config);
  EXPECT_EQ(check.config->name(), "blocktile1d_bm64_bn64_bk8_tm8");
  EXPECT_TRUE(check.staleReasons.empty());
}

TEST_F(dbStaleRows, FamilyColumnThatDoesNotMatchTheNameIsStale) {
  auto row = stored(test::okResult("blocktile1d_bm64_bn64_bk8_tm8", 4096, 4096, 4096, 17000));
  row.family = "smem";
  auto check = checkStoredRow(row, present, current);
  ASSERT_TRUE(check.config);
  EXPECT_EQ(check.config->family, &bt);
  EXPECT_EQ(check.staleReasons, std::vector<std::string>{"family does not match the instance name"});
}

TEST_F(dbStaleRows, RowRejectedByAStaticConstraintIsRebuiltNotStale) {
  Config c{&bt, {16, 64, 8, 32}, false};  // TM does not divide BM
  ASSERT_NE(c.violated(), nullptr);
  EXPECT_THROW(FamilyRegistry::builtin().parseName(c.name()), UsageError);
  auto record = test::currentRecord(c, 4096, 4096, 4096);
  record.setStatus("rejected:constraint");
  auto check = checkStoredRow(stored(record), present, current);
  ASSERT_TRUE(check.config);
  EXPECT_EQ(*check.config, c);
  EXPECT_TRUE(check.staleReasons.empty());

  // The same name on an ok row cannot have been measured: never rebuilt.
  record.setStatus("ok");
  check = checkStoredRow(stored(record), present, current);
  EXPECT_FALSE(check.config);
  EXPECT_EQ(check.staleReasons, std::vector<std::string>{"unknown instance name"});

  // Parameters that do not spell the stored name are not trusted either.
  record.setStatus("rejected:constraint");
  record.params = R"({"BM":16,"BN":64,"BK":8,"TM":16})";
  EXPECT_FALSE(checkStoredRow(stored(record), present, current).config);
}

TEST_F(dbStaleRows, AnotherGpuFingerprintAndAnOlderKeyAreStale) {
  auto row = stored(test::okResult("smem_bs32", 4096, 4096, 4096, 9000, test::testGpu(100)));
  row.key.methodVersion = "tune0.time0.verify0";
  auto reasons = checkStoredRow(row, present, current).staleReasons;
  ASSERT_EQ(reasons.size(), 2u);
  EXPECT_EQ(reasons[0].rfind("method tune0.time0.verify0 (now ", 0), 0u) << reasons[0];
  EXPECT_EQ(reasons[1], "GPU fingerprint changed");
  // A GPU never seen counts as changed.
  EXPECT_EQ(checkStoredRow(stored(test::okResult("smem_bs32", 64, 64, 64, 9000)), present, {}).staleReasons,
            std::vector<std::string>{"GPU fingerprint changed"});
}

TEST(dbStaleRowsRule, CurrentFingerprintIsTheOneTunedLast) {
  auto gpu = [](const std::string& name, const std::string& fingerprint, const std::string& lastRunAt, int id) {
    StoredGpu g;
    g.id = id;
    g.fingerprint = fingerprint;
    g.spec.name = name;
    g.lastRunAt = lastRunAt;
    return g;
  };
  auto current = currentFingerprints({gpu("A", "a-new", "2025-02-01T00:00:00Z", 1),
                                      gpu("A", "a-old", "2025-01-01T00:00:00Z", 2), gpu("B", "b1", "", 3),
                                      gpu("B", "b2", "", 4)});
  EXPECT_EQ(current, (CurrentFingerprints{{"A", "a-new"}, {"B", "b2"}}));
}
