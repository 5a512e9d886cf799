// Library::sgemm() without a GPU: every argument check returns invalid_argument with a message,
// and valid arguments without a driver (or without a current context) return no_gpu — never an
// exception, never a crash.
// Run: ctest -R librarySgemm
#include <gtest/gtest.h>

#include <thread>

#include "CudaDriver.hpp"
#include "gemmtune/Errors.hpp"
#include "gemmtune/Library.hpp"
#include "library_test_support.hpp"

using namespace gemmtune;

namespace {

struct LibrarySgemmFixture : ::testing::Test {
  test::ScratchDir dir;
  Library lib{dir / "tune.db"};
  // Never dereferenced: every call here stops before a launch.
  float a[4] = {}, b[4] = {}, c[4] = {};

  Status call(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, int ldc) {
    return lib.sgemm(nullptr, M, N, K, 1.0f, A, lda, B, ldb, 0.0f, C, ldc);
  }
};

}  // namespace

using librarySgemm = LibrarySgemmFixture;

TEST_F(librarySgemm, DimensionsBelowOneAreRejected) {
  EXPECT_EQ(call(0, 2, 2, a, 2, b, 2, c, 2), Status::invalid_argument);
  EXPECT_NE(Library::lastError().find("at least 1"), std::string::npos) << Library::lastError();
  EXPECT_EQ(call(2, -1, 2, a, 2, b, 2, c, 2), Status::invalid_argument);
  EXPECT_EQ(call(2, 2, 0, a, 2, b, 2, c, 2), Status::invalid_argument);
}

TEST_F(librarySgemm, LeadingDimensionsMustCoverTheRows) {
  EXPECT_EQ(call(2, 3, 4, a, 3, b, 3, c, 3), Status::invalid_argument);
  EXPECT_NE(Library::lastError().find("lda = 3 is less than K = 4"), std::string::npos) << Library::lastError();
  EXPECT_EQ(call(2, 3, 4, a, 4, b, 2, c, 3), Status::invalid_argument);
  EXPECT_NE(Library::lastError().find("ldb = 2"), std::string::npos) << Library::lastError();
  EXPECT_EQ(call(2, 3, 4, a, 4, b, 3, c, 2), Status::invalid_argument);
  EXPECT_NE(Library::lastError().find("ldc = 2"), std::string::npos) << Library::lastError();
}

TEST_F(librarySgemm, NullAndMisalignedPointersAreRejected) {
  EXPECT_EQ(call(1, 1, 1, nullptr, 1, b, 1, c, 1), Status::invalid_argument);
  EXPECT_NE(Library::lastError().find("null pointer for A"), std::string::npos);
  EXPECT_EQ(call(1, 1, 1, a, 1, nullptr, 1, c, 1), Status::invalid_argument);
  EXPECT_EQ(call(1, 1, 1, a, 1, b, 1, nullptr, 1), Status::invalid_argument);
  auto* odd = reinterpret_cast<const float*>(reinterpret_cast<const char*>(a) + 2);
  EXPECT_EQ(call(1, 1, 1, a, 1, odd, 1, c, 1), Status::invalid_argument);
  EXPECT_NE(Library::lastError().find("B is not aligned"), std::string::npos) << Library::lastError();
}

TEST_F(librarySgemm, ValidArgumentsWithoutADriverOrContextReturnNoGpu) {
  // Without a driver: no_gpu from the loader. With one (a GPU host), this fresh thread has no
  // current context: no_gpu too.
  Status s = Status::ok;
  std::string error;
  std::thread([&] {
    s = call(2, 2, 2, a, 2, b, 2, c, 2);
    error = Library::lastError();
  }).join();
  EXPECT_EQ(s, Status::no_gpu);
  EXPECT_FALSE(error.empty());
  if (!CudaDriver::available())
    EXPECT_NE(error.find("no CUDA driver"), std::string::npos) << error;
  else
    EXPECT_NE(error.find("no current CUDA context"), std::string::npos) << error;
}

TEST_F(librarySgemm, LastErrorBelongsToTheCallingThread) {
  EXPECT_EQ(call(0, 1, 1, a, 1, b, 1, c, 1), Status::invalid_argument);
  std::string other = "unset";
  std::thread([&] { other = Library::lastError(); }).join();
  EXPECT_EQ(other, "");
  EXPECT_FALSE(Library::lastError().empty());
}

TEST_F(librarySgemm, BestForADeviceWithoutAGpuThrowsNoGpuError) {
  if (CudaDriver::available()) GTEST_SKIP() << "a driver is present";
  EXPECT_THROW(lib.best(0, 64, 64, 64), NoGpuError);
}
