// The record of shapes served without an exact row, end to end on a GPU (label gpu; skipped
// without a driver): sgemm() on a shape no database holds (the built-in default), the Library
// destroyed, and the user's database — created by the library — holds that shape with its calls
// and an estimated time; with recording off nothing more is added.
// Run: ctest -L gpu -R LibrarySeenGpu --output-on-failure
#include <gtest/gtest.h>

#include <vector>

#include "CudaDriver.hpp"
#include "DeviceBuffer.hpp"
#include "PrimaryContext.hpp"
#include "ResultStore.hpp"
#include "gemmtune/Library.hpp"
#include "scratch_dir.hpp"

namespace gemmtune {
namespace {

TEST(LibrarySeenGpu, AnUntunedShapeIsRecordedWhenTheLibraryIsDestroyed) {
  if (!CudaDriver::available()) GTEST_SKIP() << "no CUDA driver/GPU";
  PrimaryContext context(0);
  test::ScratchDir dir;
  const auto file = dir.path() / "tune.db";
  const int m = 100, n = 37, k = 19;
  DeviceBuffer a(sizeof(float) * m * k), b(sizeof(float) * k * n), c(sizeof(float) * m * n);
  a.fill32(0), b.fill32(0), c.fill32(0);
  auto run = [&](bool record, int calls) {
    Library::Options options;
    options.stores = {file.string()};
    options.recordSeen = record;
    Library lib(options);
    for (int i = 0; i < calls; ++i)
      ASSERT_EQ(lib.sgemm(nullptr, m, n, k, 1.0f, reinterpret_cast<const float*>(a.ptr()), k,
                          reinterpret_cast<const float*>(b.ptr()), n, 0.0f, reinterpret_cast<float*>(c.ptr()), n),
                Status::ok)
          << Library::lastError();
    CudaDriver::get().check(CudaDriver::get().cuCtxSynchronize(), "cuCtxSynchronize");
  };
  run(true, 3);
  ASSERT_TRUE(std::filesystem::exists(file)) << "the library did not write the user's database";
  auto rows = db::openStore(file.string(), {db::OpenMode::ReadOnly})->seen({});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].problem, (db::ProblemKey{m, n, k, "nn", "any", 1}));
  EXPECT_EQ(rows[0].calls, 3);
  EXPECT_GT(rows[0].timeMs, 0.0);

  run(false, 2);
  rows = db::openStore(file.string(), {db::OpenMode::ReadOnly})->seen({});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].calls, 3);
}

}  // namespace
}  // namespace gemmtune
