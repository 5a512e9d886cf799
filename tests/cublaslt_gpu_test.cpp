// cuBLASLt's algorithm configurations on a real GPU (label gpu; skipped without a driver or
// cuBLASLt): the list for a problem starts with the heuristic's choices; every configuration listed
// computes the product cuBLAS computes (FP32, any summation order) in each layout, one product or a
// strided batch with padded leading dimensions and beta; a name read back runs the same
// configuration bit for bit; a configuration that does not fit, and pointer arrays, are statuses.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "CublasLtLibrary.hpp"
#include "DeviceBuffer.hpp"
#include "worker/Cublas.hpp"
#include "worker_test_support.hpp"

using namespace gemmtune;

namespace {

constexpr std::size_t kWorkspaceBytes = 32u << 20;

class CublasLtGpu : public test::HelpersOnGpu {
 protected:
  void SetUp() override {
    HelpersOnGpu::SetUp();
    if (IsSkipped()) return;
    std::string why;
    lib_ = CublasLtLibrary::get(why);
    if (!lib_) GTEST_SKIP() << why;
    std::string error;
    ASSERT_EQ(lib_->create(handle_, error), 0) << error;
    blas_ = std::make_unique<Cublas>(gpu_->stream());
    workspace_ = DeviceBuffer(kWorkspaceBytes);
  }
  void TearDown() override {
    if (lib_) lib_->destroy(handle_);
  }

  // Operands for an M×N×K problem in `layout`, `batch` strided products, leading dimensions padded
  // by `pad`: A and B random, C random (beta reads it) in `c` and a copy of it in `ref`.
  SgemmArgs operands(int M, int N, int K, Layout layout, int batch, int pad) {
    SgemmArgs a;
    a.m = M, a.n = N, a.k = K, a.layout = layout, a.alpha = 1.5f, a.beta = -0.5f;
    const int rowsA = layout.transA ? K : M, colsA = layout.transA ? M : K;
    const int rowsB = layout.transB ? N : K, colsB = layout.transB ? K : N;
    a.lda = colsA + pad, a.ldb = colsB + pad, a.ldc = N + pad;
    a.batch.count = batch;
    a.batch.strideA = static_cast<long long>(rowsA) * a.lda;
    a.batch.strideB = static_cast<long long>(rowsB) * a.ldb;
    a.batch.strideC = static_cast<long long>(M) * a.ldc;
    A_ = DeviceBuffer(4 * a.batch.strideA * batch);
    B_ = DeviceBuffer(4 * a.batch.strideB * batch);
    C_ = DeviceBuffer(4 * a.batch.strideC * batch);
    ref_ = DeviceBuffer(4 * a.batch.strideC * batch);
    helpers_->fillNormal(A_.ptr(), a.batch.strideA * batch, 1);
    helpers_->fillNormal(B_.ptr(), a.batch.strideB * batch, 2);
    helpers_->fillNormal(ref_.ptr(), a.batch.strideC * batch, 3);
    a.a = A_.ptr(), a.b = B_.ptr(), a.c = ref_.ptr();
    blas_->gemm(Cublas::Math::Pedantic, a);  // the reference, in ref_
    a.c = C_.ptr();
    return a;
  }
  // C after running `algo` on a fresh copy of C's starting values.
  std::vector<float> run(const SgemmArgs& a, const CublasLtAlgo& algo, int* status) {
    helpers_->fillNormal(C_.ptr(), a.batch.strideC * a.batch.count, 3);
    std::string error;
    *status = lib_->rowMajorMatmul(handle_, a, algo, workspace_.ptr(), kWorkspaceBytes, gpu_->stream(), error);
    gpu_->sync();
    std::vector<float> out(static_cast<std::size_t>(a.batch.strideC * a.batch.count));
    C_.download(out.data(), out.size() * 4);
    return out;
  }
  std::vector<float> reference(const SgemmArgs& a) const {
    std::vector<float> out(static_cast<std::size_t>(a.batch.strideC * a.batch.count));
    ref_.download(out.data(), out.size() * 4);
    return out;
  }

  const CublasLtLibrary* lib_ = nullptr;
  void* handle_ = nullptr;
  std::unique_ptr<Cublas> blas_;
  DeviceBuffer workspace_, A_, B_, C_, ref_;
};

// The largest difference between `got` and `want` in units of sqrt(K) (FP32 sums of K products of
// unit normals: any summation order stays well within 1e-5·sqrt(K)·|terms|).
double worstScaled(const std::vector<float>& got, const std::vector<float>& want, int K) {
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double d = std::fabs(double(got[i]) - double(want[i]));
    worst = std::max(worst, std::isfinite(d) ? d : 1e30);
  }
  return worst / std::sqrt(double(K));
}

}  // namespace

TEST_F(CublasLtGpu, EveryListedConfigurationComputesTheProductInEachLayout) {
  for (const char* name : {"nn", "nt", "tn", "tt"}) {
    const Layout layout{name[0] == 't', name[1] == 't'};
    const SgemmArgs a = operands(333, 517, 1031, layout, 1, 3);
    std::vector<CublasLtAlgo> algos;
    std::string error;
    constexpr std::size_t kAsManyAsTheWorkerLists = 1200;  // WorkerServer::kLtListLimit: custom options too
    ASSERT_EQ(lib_->algorithms(handle_, a, kWorkspaceBytes, kAsManyAsTheWorkerLists, algos, error), 0) << error;
    ASSERT_GT(algos.size(), 4u) << name;
    // Past the heuristic's answers (at most 32), every default configuration comes before any
    // variant (custom option): the list limit and the screen cut variants first.
    constexpr std::size_t kHeuristicAnswers = 32;
    bool variantSeen = false;
    for (std::size_t i = kHeuristicAnswers; i < algos.size(); ++i) {
      EXPECT_FALSE(variantSeen && algos[i].custom == 0) << name << " default after a variant: " << algos[i].name();
      variantSeen = variantSeen || algos[i].custom > 0;
    }
    const std::vector<float> want = reference(a);
    for (const CublasLtAlgo& algo : algos) {
      int status = -1;
      const std::vector<float> got = run(a, algo, &status);
      ASSERT_EQ(status, 0) << name << " " << algo.name();
      EXPECT_LT(worstScaled(got, want, a.k), 1e-4) << name << " " << algo.name();
      ASSERT_EQ(CublasLtAlgo::parse(algo.name()), algo);
    }
  }
}

TEST_F(CublasLtGpu, StridedBatchesWithPaddedRowsStayInTheirOwnC) {
  const SgemmArgs a = operands(129, 67, 300, Layout{false, true}, 5, 7);
  std::vector<CublasLtAlgo> algos;
  std::string error;
  ASSERT_EQ(lib_->algorithms(handle_, a, kWorkspaceBytes, 60, algos, error), 0) << error;
  ASSERT_FALSE(algos.empty());
  // The padding between rows and batches is C's starting value in both: a write there differs.
  const std::vector<float> want = reference(a);
  for (const CublasLtAlgo& algo : algos) {
    int status = -1;
    EXPECT_LT(worstScaled(run(a, algo, &status), want, a.k), 1e-4) << algo.name();
    EXPECT_EQ(status, 0) << algo.name();
  }
}

TEST_F(CublasLtGpu, AConfigurationThatDoesNotExistOrPointerArraysAreAStatus) {
  SgemmArgs a = operands(64, 64, 64, Layout{}, 1, 0);
  CublasLtAlgo bogus;
  bogus.id = 100000;
  int status = 0;
  run(a, bogus, &status);
  EXPECT_NE(status, 0);
  a.batch.arrayA = a.batch.arrayB = a.batch.arrayC = A_.ptr();
  std::vector<CublasLtAlgo> algos;
  std::string error;
  EXPECT_NE(lib_->algorithms(handle_, a, kWorkspaceBytes, 10, algos, error), 0);
  EXPECT_NE(error.find("pointer arrays"), std::string::npos) << error;
}
