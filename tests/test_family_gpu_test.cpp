// The test-only family end to end on a GPU: `tune` (the CLI built with the test families) times
// it, and Library::sgemm() (this program links the same families) serves it and is correct, at
// the tuned size and at an untuned one (guarded form). Skips without a GPU.
// Run: ctest -R TestFamilyGpu
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "CliRunner.hpp"
#include "CudaDriver.hpp"
#include "DeviceBuffer.hpp"
#include "PrimaryContext.hpp"
#include "db_test_support.hpp"
#include "gemmtune/Library.hpp"

using namespace gemmtune;
using gemmtune::test::runCli;

namespace {

// C = A * B on the GPU through the library, compared with a double-precision CPU product.
double maxRelativeError(Library& lib, int m, int n, int k) {
  std::mt19937 rng(7);
  std::normal_distribution<float> dist;
  std::vector<float> a(static_cast<size_t>(m) * k), b(static_cast<size_t>(k) * n), c(static_cast<size_t>(m) * n, NAN);
  for (auto& x : a) x = dist(rng);
  for (auto& x : b) x = dist(rng);
  DeviceBuffer da(a.size() * 4), db(b.size() * 4), dc(c.size() * 4);
  const auto& cu = CudaDriver::get();
  cu.check(cu.cuMemcpyHtoD(da.ptr(), a.data(), a.size() * 4), "cuMemcpyHtoD");
  cu.check(cu.cuMemcpyHtoD(db.ptr(), b.data(), b.size() * 4), "cuMemcpyHtoD");
  cu.check(cu.cuMemcpyHtoD(dc.ptr(), c.data(), c.size() * 4), "cuMemcpyHtoD");
  Status s = lib.sgemm(nullptr, m, n, k, 1.0f, reinterpret_cast<const float*>(da.ptr()), k,
                       reinterpret_cast<const float*>(db.ptr()), n, 0.0f, reinterpret_cast<float*>(dc.ptr()), n);
  EXPECT_EQ(s, Status::ok) << Library::lastError();
  cu.check(cu.cuCtxSynchronize(), "cuCtxSynchronize");
  cu.check(cu.cuMemcpyDtoH(c.data(), dc.ptr(), c.size() * 4), "cuMemcpyDtoH");
  double worst = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double ref = 0, mag = 0;
      for (int p = 0; p < k; ++p) {
        ref += double(a[size_t(i) * k + p]) * b[size_t(p) * n + j];
        mag += std::abs(double(a[size_t(i) * k + p]) * b[size_t(p) * n + j]);
      }
      const double got = c[size_t(i) * n + j];
      if (!std::isfinite(got)) return INFINITY;
      worst = std::max(worst, std::abs(got - ref) / (mag + 1e-30));
    }
  return worst;
}

}  // namespace

TEST(TestFamilyGpu, TunedByTheCliAndServedByTheLibrary) {
  if (!CudaDriver::available()) GTEST_SKIP() << "no CUDA driver";
  test::ScratchDir dir;
  const std::string db = (dir / "probe.db").string();
  const std::vector<std::string> env = {"XDG_CACHE_HOME=" + (dir / "cache").string()};
  auto tuned = runCli({"tune", "--gpu", "0", "--sizes", "512", "--families", "probe", "--db", db, "--json"}, env);
  ASSERT_EQ(tuned.exitCode, 0) << tuned.err;
  auto rows = runCli({"results", "--db", db, "--family", "probe", "--status", "ok"}, env);
  ASSERT_EQ(rows.exitCode, 0) << rows.err;
  EXPECT_NE(rows.out.find("probe_bs"), std::string::npos) << rows.out;

  PrimaryContext ctx(0);
  // The probe family's kernels, not cuBLAS (the tune measured it as a candidate too).
  Library::Options options;
  options.stores = {db};
  options.cublas = false;
  Library lib(options);
  Choice exact = lib.best(0, 512, 512, 512);
  EXPECT_EQ(exact.match, Match::exact) << exact.note;
  EXPECT_EQ(exact.instance.rfind("probe_bs", 0), 0u) << exact.instance;
  EXPECT_LT(maxRelativeError(lib, 512, 512, 512), 1e-5);
  Choice near = lib.best(0, 301, 77, 129);
  EXPECT_EQ(near.instance.rfind("probe_bs", 0), 0u) << near.instance;
  EXPECT_NE(near.instance.find("_guarded"), std::string::npos) << near.instance;
  EXPECT_LT(maxRelativeError(lib, 301, 77, 129), 1e-5);
}
