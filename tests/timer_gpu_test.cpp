// The timer on a real GPU (label gpu; skipped without a driver): a sample counts the GPU's time
// alone, not the host's time before its launch reaches the GPU, and a launch callback that waits
// for its own stream does not hang the gated timer.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "CudaDriver.hpp"
#include "DeviceBuffer.hpp"
#include "worker/GpuContext.hpp"
#include "worker/HelperKernels.hpp"
#include "worker/LaunchGate.hpp"
#include "worker/Timer.hpp"

using namespace gemmtune;

namespace {

class TimerGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!CudaDriver::available()) GTEST_SKIP() << "no CUDA driver/GPU";
    gpu_ = std::make_unique<GpuContext>(0);
    const WorkerInfo info = gpu_->info();
    helpers_ = std::make_unique<HelperKernels>(info.arch, gpu_->stream(), info.smCount);
    gate_ = std::make_unique<LaunchGate>(*helpers_);
  }
  static TimingPolicy samples(int n) {
    TimingPolicy p;
    p.warmupMs = 1;
    p.minReps = p.maxReps = n;
    return p;
  }
  static TimingPolicy fiveSamples() { return samples(5); }

  std::unique_ptr<GpuContext> gpu_;
  std::unique_ptr<HelperKernels> helpers_;
  std::unique_ptr<LaunchGate> gate_;
};

}  // namespace

// A host that takes 5 ms to submit a microsecond kernel: before the gate, every sample measured
// the 5 ms (the start event fired on the idle GPU as soon as it was queued).
TEST_F(TimerGpu, TheHostsTimeBeforeALaunchIsNotCounted) {
  DeviceBuffer buf(4 * 1024);
  const TimingResult t = timeLaunches(fiveSamples(), gpu_->stream(), *gate_, [&](int) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    helpers_->fillConstant(buf.ptr(), 1024, 1.0f);
  });
  EXPECT_EQ(t.summary.reps, 5);
  EXPECT_GT(t.summary.minMs, 0);
  EXPECT_LT(t.summary.medianMs, 1.0) << "the host's 5 ms before each launch were timed";
}

// A callback that synchronizes its stream waits for the hold: the hold gives up after its timeout
// and the timing ends (the host's time after the timeout counted) rather than the worker hanging.
TEST_F(TimerGpu, ACallbackThatWaitsForItsStreamEndsTheHoldInsteadOfHanging) {
  DeviceBuffer buf(4 * 1024);
  const auto start = std::chrono::steady_clock::now();
  const TimingResult t = timeLaunches(fiveSamples(), gpu_->stream(), *gate_, [&](int) {
    gpu_->sync();
    helpers_->fillConstant(buf.ptr(), 1024, 1.0f);
  });
  const double wallMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(t.summary.reps, 5);
  EXPECT_LT(wallMs, 5 * 1e-6 * LaunchGate::kTimeoutNs + 1000);
  // Afterwards the gate times kernels as before.
  const TimingResult after = timeLaunches(fiveSamples(), gpu_->stream(), *gate_,
                                          [&](int) { helpers_->fillConstant(buf.ptr(), 1024, 1.0f); });
  EXPECT_LT(after.summary.medianMs, 1.0);
}

// The hold ends when the host opens the gate, not at its timeout: were the host's write never seen
// by the GPU, every sample would still be right (all was queued by then) but would take 20 ms.
TEST_F(TimerGpu, TheGateOpensAsSoonAsTheHostHasSubmitted) {
  DeviceBuffer buf(4 * 1024);
  constexpr int kSamples = 50;
  const auto start = std::chrono::steady_clock::now();
  const TimingResult t = timeLaunches(samples(kSamples), gpu_->stream(), *gate_,
                                      [&](int) { helpers_->fillConstant(buf.ptr(), 1024, 1.0f); });
  const double wallMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(t.summary.reps, kSamples);
  EXPECT_LT(wallMs, kSamples * 1e-6 * LaunchGate::kTimeoutNs / 4) << "the holds waited for their timeout";
}
