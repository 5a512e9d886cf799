// Workspace against a real GPU (label gpu; skipped without a driver): the zeroed prefix is zero,
// and allocations outgrown by scratch (fp16x3 asks for gigabytes past the prefix) are freed once
// the work queued before the growth has finished, so a workload of growing sizes holds about what
// its largest needs. Before, every outgrown allocation stayed until the Workspace went.
#include <gtest/gtest.h>

#include <vector>

#include "CudaDriver.hpp"
#include "GpuDetect.hpp"
#include "LaunchPlan.hpp"
#include "PrimaryContext.hpp"
#include "Workspace.hpp"

using namespace gemmtune;

namespace {

size_t freeBytes(const CudaDriver& cu) {
  size_t free = 0, total = 0;
  cu.check(cu.cuMemGetInfo(&free, &total), "cuMemGetInfo");
  return free;
}

}  // namespace

TEST(WorkspaceGpu, OutgrownScratchIsFreedOnceItsWorkIsDone) {
  if (!CudaDriver::available() || detectGpus().empty()) GTEST_SKIP() << "no CUDA GPU";
  const CudaDriver& cu = CudaDriver::get();
  PrimaryContext ctx(0);
  CUstream stream = nullptr;
  cu.check(cu.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  const long long mib = 1LL << 20;
  {
    Workspace workspace(cu);
    CUdeviceptr p = 0;
    ASSERT_EQ(workspace.reserve(kZeroedWorkspaceBytes + 64 * mib, stream, p), CUDA_SUCCESS);
    cu.check(cu.cuStreamSynchronize(stream), "sync");
    std::vector<unsigned> prefix(1 << 20, 1u);
    cu.check(cu.cuMemcpyDtoH(prefix.data(), p + kZeroedWorkspaceBytes - 4 * prefix.size(), 4 * prefix.size()), "read");
    for (unsigned v : prefix) ASSERT_EQ(v, 0u) << "the prefix's last 4 MiB are not zeroed";
    const size_t before = freeBytes(cu);
    // Twenty growths of 256 MiB each: kept, they would hold about 26 GiB.
    for (int i = 1; i <= 20; ++i) {
      ASSERT_EQ(workspace.reserve(kZeroedWorkspaceBytes + i * 256 * mib, stream, p), CUDA_SUCCESS) << i;
      ASSERT_NE(p, 0u);
      cu.check(cu.cuStreamSynchronize(stream), "sync");
    }
    ASSERT_EQ(workspace.reserve(1, stream, p), CUDA_SUCCESS);  // frees what has finished
    const long long held = static_cast<long long>(before) - static_cast<long long>(freeBytes(cu));
    // The largest need is 5 GiB past the prefix; grown by half each time, the current allocation
    // is at most 1.5 times that, and nothing outgrown remains.
    EXPECT_LE(held, 8LL * 1024 * mib) << "MiB held after the growths: " << held / mib;
  }
  cu.check(cu.cuStreamDestroy(stream), "cuStreamDestroy");
}
