// LaunchGate: lets the timer measure the GPU alone. A sample's start event, launch and stop event
// are queued behind a one-thread kernel that holds the stream until the host opens the gate, so
// the GPU begins them back to back. Without it, the start event fires as soon as it reaches an
// idle GPU, and the sample also holds the host's submission of the launch: at 1024³, measured on
// an H100, about 2 µs for our kernels and 7.5 µs for cuBLAS's call (two kernels and its own host
// work), against about 60 µs of GPU time; more whenever a loaded host thread waits for the CPU.
//
// Under CUDA_LAUNCH_BLOCKING=1 a launch returns only once it has run, so the hold could never be
// opened in time: the gate stays open there (the samples then hold the host's time, as before).
#pragma once

#include <cuda.h>

#include <cstdint>

namespace gemmtune {

class HelperKernels;

class LaunchGate {
 public:
  // The hold kernel runs on `helpers`' stream: the stream being timed.
  explicit LaunchGate(const HelperKernels& helpers);
  ~LaunchGate();
  LaunchGate(const LaunchGate&) = delete;
  LaunchGate& operator=(const LaunchGate&) = delete;

  // The gate closed for this object's lifetime (nothing, for a null gate): what the stream is given
  // meanwhile waits behind the hold, and leaving the scope, by an exception too, opens it, so the
  // stream never waits for the timeout needlessly. Should the host block inside the scope (a call
  // that synchronizes the stream), the hold gives up after kTimeoutNs instead of waiting forever,
  // and that one sample holds the host's time as before.
  class Closed {
   public:
    explicit Closed(LaunchGate* gate);
    ~Closed();
    Closed(const Closed&) = delete;
    Closed& operator=(const Closed&) = delete;

   private:
    LaunchGate* gate_;
  };

  static constexpr std::uint64_t kTimeoutNs = 20'000'000;

 private:
  const HelperKernels& helpers_;
  std::uint32_t* word_ = nullptr;  // pinned, mapped into the GPU's address space
  CUdeviceptr device_ = 0;
  std::uint32_t ticket_ = 0;
  bool blockingLaunches_ = false;  // CUDA_LAUNCH_BLOCKING=1: never close

  void close();  // queues the hold for the next ticket
  void open();   // hands the GPU that ticket
};

}  // namespace gemmtune
