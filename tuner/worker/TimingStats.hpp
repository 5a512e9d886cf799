// TimingStats: the statistics and stopping rule of the timing loop, kept apart from CUDA so they
// can be tested without a GPU.
#pragma once

#include <vector>

#include "WorkerProtocol.hpp"

namespace gemmtune {

struct TimingSummary {
  double medianMs = 0, minMs = 0;
  double spread = 0;  // (p75 - p25) / median
  int reps = 0;
};

// Linear-interpolated quantiles of `samplesMs` (any order). Empty input gives all zeros.
TimingSummary summarize(std::vector<double> samplesMs);

enum class TimingStop { Continue, MaxReps, Spread, Budget, Slower };

// After each timed repetition: whether to stop and why. `Slower` means the candidate is clearly
// slower than policy.bestSoFarMs and its statistics are partial.
TimingStop timingStop(const TimingPolicy& policy, const TimingSummary& s, double timedMsTotal);

}  // namespace gemmtune
