// The timer on a real GPU (label gpu; skipped without a driver): a sample counts the GPU's time
// alone, not the host's time before its launch reaches the GPU; the gate opens as soon as the host
// has submitted; a launch callback that waits for its own stream does not hang the gated timer;
// a first launch's one-time host work falls in the ungated warm-up; CUDA_LAUNCH_BLOCKING leaves
// the gate open.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "DeviceBuffer.hpp"
#include "worker/LaunchGate.hpp"
#include "worker/Timer.hpp"
#include "worker_test_support.hpp"

using namespace gemmtune;

namespace {

class TimerGpu : public test::HelpersOnGpu {
 protected:
  void SetUp() override {
    HelpersOnGpu::SetUp();
    if (IsSkipped()) return;
    buf_ = DeviceBuffer(4 * 1024);
    gate_ = std::make_unique<LaunchGate>(*helpers_);
  }
  static TimingPolicy samples(int n, double warmupMs = 1) {
    TimingPolicy p;
    p.warmupMs = warmupMs;
    p.minReps = p.maxReps = n;
    return p;
  }
  void tinyKernel() const { helpers_->fillConstant(buf_.ptr(), 1024, 1.0f); }
  // Wall milliseconds of timing `launch` under `policy` with `gate`; the result into *out.
  double wallMs(const TimingPolicy& policy, LaunchGate& gate, const std::function<void(int)>& launch,
                TimingResult* out) const {
    const auto start = std::chrono::steady_clock::now();
    *out = timeLaunches(policy, gpu_->stream(), gate, launch);
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
  static constexpr double kTimeoutMs = 1e-6 * LaunchGate::kTimeoutNs;

  DeviceBuffer buf_;
  std::unique_ptr<LaunchGate> gate_;
};

}  // namespace

// A host that takes 5 ms to submit a microsecond kernel: before the gate, every sample measured
// the 5 ms (the start event fired on the idle GPU as soon as it was queued).
TEST_F(TimerGpu, TheHostsTimeBeforeALaunchIsNotCounted) {
  const TimingResult t = timeLaunches(samples(5), gpu_->stream(), *gate_, [&](int) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    tinyKernel();
  });
  EXPECT_EQ(t.summary.reps, 5);
  EXPECT_GT(t.summary.minMs, 0);
  EXPECT_LT(t.summary.medianMs, 1.0) << "the host's 5 ms before each launch were timed";
}

// The hold ends when the host opens the gate, not at its timeout: were the host's write never seen
// by the GPU, every sample would still be right (all was queued by then) but would take 20 ms.
TEST_F(TimerGpu, TheGateOpensAsSoonAsTheHostHasSubmitted) {
  constexpr int kSamples = 50;
  TimingResult t;
  const double ms = wallMs(samples(kSamples), *gate_, [&](int) { tinyKernel(); }, &t);
  EXPECT_EQ(t.summary.reps, kSamples);
  EXPECT_LT(ms, kSamples * kTimeoutMs / 4) << "the holds waited for their timeout";
}

// A callback that synchronizes its stream waits for the hold: the hold gives up after its timeout
// and the timing ends (the host's time after the timeout counted) rather than the worker hanging.
TEST_F(TimerGpu, ACallbackThatWaitsForItsStreamEndsTheHoldInsteadOfHanging) {
  TimingResult t;
  const double ms = wallMs(samples(5), *gate_, [&](int) {
    gpu_->sync();
    tinyKernel();
  }, &t);
  EXPECT_EQ(t.summary.reps, 5);
  EXPECT_GE(ms, 5 * kTimeoutMs) << "each sample's sync should have waited for its hold's timeout";
  EXPECT_LT(ms, 5 * kTimeoutMs + 1000);
  // Afterwards the gate times kernels as before.
  const TimingResult after = timeLaunches(samples(5), gpu_->stream(), *gate_, [&](int) { tinyKernel(); });
  EXPECT_LT(after.summary.medianMs, 1.0);
}

// One-time host work in a first launch that waits for the GPU (a workspace grown, the old one
// freed) happens in the ungated warm-up, even with no warm-up asked: gated, it would wait for the
// hold's timeout.
TEST_F(TimerGpu, AFirstLaunchsWaitForTheGpuFallsInTheWarmUp) {
  TimingResult t;
  const double ms = wallMs(samples(5, /*warmupMs=*/0), *gate_, [&](int rep) {
    if (rep == 0) gpu_->sync();
    tinyKernel();
  }, &t);
  EXPECT_EQ(t.summary.reps, 5);
  EXPECT_LT(ms, kTimeoutMs / 2) << "the first launch's wait fell in a gated sample";
}

// Under CUDA_LAUNCH_BLOCKING=1 a launch returns only after it ran, so a closed gate could only
// time out: the gate stays open, and the host's time is counted as it was before the gate.
TEST_F(TimerGpu, UnderBlockingLaunchesTheGateStaysOpen) {
  ::setenv("CUDA_LAUNCH_BLOCKING", "1", 1);
  LaunchGate open(*helpers_);  // reads the variable when made
  ::unsetenv("CUDA_LAUNCH_BLOCKING");
  TimingResult t;
  const double ms = wallMs(samples(3), open, [&](int) {
    gpu_->sync();  // would wait for a closed gate's timeout
    tinyKernel();
  }, &t);
  EXPECT_EQ(t.summary.reps, 3);
  EXPECT_LT(ms, kTimeoutMs) << "the gate closed under CUDA_LAUNCH_BLOCKING";
}
