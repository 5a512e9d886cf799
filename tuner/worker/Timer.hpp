// Timer: CUDA events around each launch after a time-based warm-up (an idle H100 runs at
// 345 MHz and needs a moment to boost), repetitions until the policy says stop. The launch
// callback gets the repetition index so inputs rotate through copies that together exceed L2.
// Every sample is queued behind a LaunchGate, so that it measures the GPU's time alone.
#pragma once

#include <cuda.h>

#include <functional>

#include "LaunchGate.hpp"
#include "TimingStats.hpp"
#include "WorkerProtocol.hpp"

namespace gemmtune {

struct TimingResult {
  TimingSummary summary;
  bool partial = false;  // stopped early: clearly slower than the best so far
};

// `launch(rep)` enqueues one launch on `stream`, the stream `gate` holds; a launch or kernel
// failure propagates as the callback's or the driver's exception (CudaError).
TimingResult timeLaunches(const TimingPolicy& policy, CUstream stream, LaunchGate& gate,
                          const std::function<void(int rep)>& launch);

}  // namespace gemmtune
