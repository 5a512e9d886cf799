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

// Every entry point of issue 27 refuses bad arguments with a message naming the argument, and
// launches nothing (these run without a GPU: a launch would return no_gpu, not invalid_argument).
TEST_F(librarySgemm, TransposedLeadingDimensionsFollowTheLayout) {
  // Row-major op(A) = T stores A as K x M: lda must reach M.
  EXPECT_EQ(lib.sgemm(nullptr, Order::row_major, Op::T, Op::N, 5, 3, 2, 1.0f, a, 4, b, 3, 0.0f, c, 3),
            Status::invalid_argument);
  EXPECT_NE(Library::lastError().find("lda = 4 is less than M = 5"), std::string::npos) << Library::lastError();
  // Row-major op(B) = T stores B as N x K: ldb must reach K.
  EXPECT_EQ(lib.sgemm(nullptr, Order::row_major, Op::N, Op::T, 2, 3, 4, 1.0f, a, 4, b, 3, 0.0f, c, 3),
            Status::invalid_argument);
  EXPECT_NE(Library::lastError().find("ldb = 3 is less than K = 4"), std::string::npos) << Library::lastError();
  // Column-major as cuBLAS: op N A is M x K with lda >= M, C is M x N with ldc >= M.
  EXPECT_EQ(lib.sgemm(nullptr, Order::column_major, Op::N, Op::N, 5, 3, 2, 1.0f, a, 2, b, 2, 0.0f, c, 5),
            Status::invalid_argument);
  EXPECT_NE(Library::lastError().find("lda = 2 is less than M = 5"), std::string::npos) << Library::lastError();
  EXPECT_EQ(lib.sgemm(nullptr, Order::column_major, Op::N, Op::N, 5, 3, 2, 1.0f, a, 5, b, 2, 0.0f, c, 3),
            Status::invalid_argument);
  EXPECT_NE(Library::lastError().find("ldc = 3 is less than M = 5"), std::string::npos) << Library::lastError();
  EXPECT_EQ(lib.sgemm(nullptr, Order::column_major, Op::N, Op::T, 5, 3, 2, 1.0f, a, 5, b, 2, 0.0f, c, 5),
            Status::invalid_argument);
  EXPECT_NE(Library::lastError().find("ldb = 2 is less than N = 3"), std::string::npos) << Library::lastError();
}

TEST_F(librarySgemm, StridedBatchArgumentsAreChecked) {
  auto strided = [&](long long sA, long long sB, long long sC, int batch) {
    return lib.sgemmStridedBatched(nullptr, Order::row_major, Op::N, Op::N, 2, 2, 2, 1.0f, a, 2, sA, b, 2, sB, 0.0f, c,
                                   2, sC, batch);
  };
  EXPECT_EQ(strided(4, 4, 4, 0), Status::invalid_argument);
  EXPECT_NE(Library::lastError().find("batch = 0 must be at least 1"), std::string::npos) << Library::lastError();
  EXPECT_EQ(strided(-4, 4, 4, 2), Status::invalid_argument);
  EXPECT_NE(Library::lastError().find("strideA = -4 is negative"), std::string::npos) << Library::lastError();
  EXPECT_EQ(strided(4, -1, 4, 2), Status::invalid_argument);
  EXPECT_NE(Library::lastError().find("strideB = -1"), std::string::npos) << Library::lastError();
  // One 2 x 2 C with ldc 2 spans (2 - 1)·2 + 2 = 4 floats: a stride of 3 overlaps the next batch.
  EXPECT_EQ(strided(4, 4, 3, 2), Status::invalid_argument);
  EXPECT_NE(Library::lastError().find("strideC = 3 is less than one C (4 floats)"), std::string::npos)
      << Library::lastError();
  // Column-major C is M x N with ldc >= M: one C spans (N - 1)·ldc + M.
  EXPECT_EQ(lib.sgemmStridedBatched(nullptr, Order::column_major, Op::N, Op::N, 3, 2, 2, 1.0f, a, 3, 6, b, 2, 4, 0.0f,
                                    c, 3, 5, 2),
            Status::invalid_argument);
  EXPECT_NE(Library::lastError().find("less than one C (6 floats)"), std::string::npos) << Library::lastError();
  // Stride 0 shares A (or B) between the batches; C's stride exactly one C: valid (no GPU here: no_gpu).
  EXPECT_NE(strided(0, 4, 4, 2), Status::invalid_argument) << Library::lastError();
}

TEST_F(librarySgemm, PointerArrayArgumentsAreChecked) {
  const float* const arrays[1] = {a};
  float* const out[1] = {c};
  EXPECT_EQ(lib.sgemmBatched(nullptr, Order::row_major, Op::N, Op::N, 1, 1, 1, 1.0f, nullptr, 1, arrays, 1, 0.0f, out,
                             1, 1),
            Status::invalid_argument);
  EXPECT_NE(Library::lastError().find("null pointer array for A"), std::string::npos) << Library::lastError();
  EXPECT_EQ(lib.sgemmBatched(nullptr, Order::row_major, Op::N, Op::N, 1, 1, 1, 1.0f, arrays, 1, arrays, 1, 0.0f,
                             nullptr, 1, 1),
            Status::invalid_argument);
  EXPECT_NE(Library::lastError().find("null pointer array for C"), std::string::npos) << Library::lastError();
  EXPECT_EQ(lib.sgemmBatched(nullptr, Order::row_major, Op::N, Op::N, 1, 1, 1, 1.0f, arrays, 1, arrays, 1, 0.0f, out,
                             1, -3),
            Status::invalid_argument);
  EXPECT_NE(Library::lastError().find("batch = -3"), std::string::npos) << Library::lastError();
}

TEST_F(librarySgemm, BestRefusesABatchBelowOne) {
  EXPECT_THROW(lib.best(test::h100(), Op::N, Op::T, 8, 8, 8, 0), std::invalid_argument);
}
