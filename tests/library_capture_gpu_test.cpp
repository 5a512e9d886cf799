// sgemm() under CUDA graph capture (label gpu; skipped without a driver): a shape first called
// inside a capture is declined — nothing allocated, loaded or launched, the capture still valid —
// and once called outside, it is captured like any launch and the replayed graph computes it. The
// same for cuBLAS's rows: a stream without its cuBLAS handle yet is declined inside a capture.
// Preparing on one stream while another captures leaves that capture valid; split-K plans are
// declined in any capture.
// Run: ctest -L gpu -R libraryCapture --output-on-failure
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "CudaDriver.hpp"
#include "DeviceBuffer.hpp"
#include "GpuDetect.hpp"
#include "PrimaryContext.hpp"
#include "cublas_test_support.hpp"
#include "gemmtune/Library.hpp"
#include "library_test_support.hpp"

namespace gemmtune {
namespace {

const CudaDriver& drv() { return CudaDriver::get(); }

// A row-major M x N x K product of small integers (exact in FP32 whatever the order), its
// operands on the GPU and its expected C.
struct Product {
  int m, n, k;
  std::vector<float> a, b, expected;
  DeviceBuffer da, db, dc;
  explicit Product(int m_ = 67, int n_ = 45, int k_ = 37)
      : m(m_), n(n_), k(k_), a(m * k), b(k * n), expected(m * n, 0.0f), da(a.size() * 4), db(b.size() * 4),
        dc(expected.size() * 4) {
    std::mt19937 rng(3);
    std::uniform_int_distribution<int> d(-4, 4);
    for (auto& v : a) v = static_cast<float>(d(rng));
    for (auto& v : b) v = static_cast<float>(d(rng));
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j)
        for (int p = 0; p < k; ++p) expected[i * n + j] += a[i * k + p] * b[p * n + j];
    da.upload(a.data(), a.size() * 4), db.upload(b.data(), b.size() * 4);
  }
  Status run(Library& lib, CUstream s) {
    return lib.sgemm(s, m, n, k, 1.0f, reinterpret_cast<const float*>(da.ptr()), k,
                     reinterpret_cast<const float*>(db.ptr()), n, 0.0f, reinterpret_cast<float*>(dc.ptr()), n);
  }
  std::vector<float> result() const {
    std::vector<float> c(expected.size());
    dc.download(c.data(), c.size() * 4);
    return c;
  }
};

// Captures one call on `s`; the status it gave, and the graph replayed when it was ok.
Status captureAndReplay(Product& p, Library& lib, CUstream s) {
  drv().check(drv().cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), "cuStreamBeginCapture");
  const Status status = p.run(lib, s);
  CUgraph graph = nullptr;
  // A capture that a forbidden call invalidated fails here.
  EXPECT_EQ(drv().cuStreamEndCapture(s, &graph), CUDA_SUCCESS) << "the capture was invalidated";
  if (graph && status == Status::ok) {
    CUgraphExec exec = nullptr;
    drv().check(drv().cuGraphInstantiateWithFlags(&exec, graph, 0), "cuGraphInstantiateWithFlags");
    p.dc.fill32(0);
    drv().check(drv().cuCtxSynchronize(), "cuCtxSynchronize");  // the fill is on the legacy stream, s does not wait for it
    drv().check(drv().cuGraphLaunch(exec, s), "cuGraphLaunch");
    drv().check(drv().cuStreamSynchronize(s), "cuStreamSynchronize");
    drv().cuGraphExecDestroy(exec);
  }
  if (graph) drv().cuGraphDestroy(graph);
  return status;
}

struct Streams {
  CUstream a = nullptr, b = nullptr;
  Streams() {
    drv().check(drv().cuStreamCreate(&a, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    drv().check(drv().cuStreamCreate(&b, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  }
  ~Streams() { drv().cuStreamDestroy(a), drv().cuStreamDestroy(b); }
};

TEST(libraryCapture, AShapeFirstSeenInACaptureIsDeclinedThenCapturedOncePrepared) {
  if (!CudaDriver::available()) GTEST_SKIP() << "no CUDA driver/GPU";
  PrimaryContext context(0);
  test::ScratchDir dir;
  Library lib(Library::Options{{(dir / "none.db").string()}, true, false});  // the built-in default
  Product p;
  Streams s;
  EXPECT_EQ(captureAndReplay(p, lib, s.a), Status::declined);
  EXPECT_NE(Library::lastError().find("graph capture"), std::string::npos) << Library::lastError();
  ASSERT_EQ(p.run(lib, s.a), Status::ok) << Library::lastError();  // prepared outside
  drv().check(drv().cuStreamSynchronize(s.a), "cuStreamSynchronize");
  ASSERT_EQ(captureAndReplay(p, lib, s.a), Status::ok) << Library::lastError();
  EXPECT_EQ(p.result(), p.expected);
}

TEST(libraryCapture, ACublasRowOnAStreamWithoutItsHandleIsDeclinedInACapture) {
  if (!CudaDriver::available()) GTEST_SKIP() << "no CUDA driver/GPU";
  PrimaryContext context(0);
  test::ScratchDir dir;
  const GpuSpec gpu = queryGpu(0);
  Product p;
  db::ResultRecord row = test::cublasResult("nn", p.m, p.n, p.k, 1000, gpu);
  row.key.driverVersion = drv().version();
  test::writeDatabase(dir / "tune.db", gpu, {row});
  Library lib(Library::Options{{(dir / "tune.db").string()}, true, false});
  ASSERT_EQ(lib.best(0, p.m, p.n, p.k).instance, "cublas_nn");
  Streams s;
  ASSERT_EQ(p.run(lib, s.a), Status::ok) << Library::lastError();  // the shape, and stream a's handle
  drv().check(drv().cuStreamSynchronize(s.a), "cuStreamSynchronize");
  EXPECT_EQ(captureAndReplay(p, lib, s.b), Status::declined);  // stream b has no handle yet
  ASSERT_EQ(p.run(lib, s.b), Status::ok) << Library::lastError();
  drv().check(drv().cuStreamSynchronize(s.b), "cuStreamSynchronize");
  ASSERT_EQ(captureAndReplay(p, lib, s.b), Status::ok) << Library::lastError();
  EXPECT_EQ(p.result(), p.expected);
}

// A new shape prepared (compiled, loaded) on one stream while another stream of this thread
// captures in global mode, as PyTorch captures: the capture survives (found in review: preparing
// made calls a global capture forbids, which invalidated it).
TEST(libraryCapture, PreparingWhileAnotherStreamCapturesLeavesThatCaptureValid) {
  if (!CudaDriver::available()) GTEST_SKIP() << "no CUDA driver/GPU";
  PrimaryContext context(0);
  test::ScratchDir dir;
  Library lib(Library::Options{{(dir / "none.db").string()}, true, false});
  Product p(33, 65, 17);
  Streams s;
  drv().check(drv().cuStreamBeginCapture(s.a, CU_STREAM_CAPTURE_MODE_GLOBAL), "cuStreamBeginCapture");
  const Status status = p.run(lib, s.b);
  CUgraph graph = nullptr;
  EXPECT_EQ(drv().cuStreamEndCapture(s.a, &graph), CUDA_SUCCESS) << "the capture on the other stream was invalidated";
  if (graph) drv().cuGraphDestroy(graph);
  ASSERT_EQ(status, Status::ok) << Library::lastError();
  drv().check(drv().cuStreamSynchronize(s.b), "cuStreamSynchronize");
  EXPECT_EQ(p.result(), p.expected);
}

// A split-K plan is never captured: a graph would share the stream's workspace with every replay.
TEST(libraryCapture, ASplitKPlanIsDeclinedInACaptureEvenOncePrepared) {
  if (!CudaDriver::available()) GTEST_SKIP() << "no CUDA driver/GPU";
  PrimaryContext context(0);
  test::ScratchDir dir;
  const GpuSpec gpu = queryGpu(0);
  Product p(64, 64, 2048);
  db::ResultRecord row = test::okResult("thin_bm32_bn64_bk32_tm4_tn4_st2_sk4", p.m, p.n, p.k, 500, gpu);
  row.key.driverVersion = drv().version();
  row.cubin.clear();  // compiled with NVRTC on first use
  test::writeDatabase(dir / "tune.db", gpu, {row});
  Library lib(Library::Options{{(dir / "tune.db").string()}, false, false});
  ASSERT_EQ(lib.best(0, p.m, p.n, p.k).instance, "thin_bm32_bn64_bk32_tm4_tn4_st2_sk4");
  Streams s;
  ASSERT_EQ(p.run(lib, s.a), Status::ok) << Library::lastError();  // prepared, its workspace allocated
  drv().check(drv().cuStreamSynchronize(s.a), "cuStreamSynchronize");
  EXPECT_EQ(p.result(), p.expected);
  EXPECT_EQ(captureAndReplay(p, lib, s.a), Status::declined);
  EXPECT_NE(Library::lastError().find("split-K"), std::string::npos) << Library::lastError();
}

}  // namespace
}  // namespace gemmtune
