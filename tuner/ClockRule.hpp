// When a timing is not to be trusted because of the clock: the GPU was far below its boost clock
// (it idles at a few hundred MHz while NVRTC works, and clocks up within milliseconds). The tuner
// times such a candidate again; `results` marks rows left that way.
#pragma once

namespace gemmtune {

constexpr int kLowClockPercent = 80;

// Both in MHz; false when either is unknown (0).
inline bool belowSustainedClock(int measuredMHz, int boostMHz) {
  return measuredMHz > 0 && boostMHz > 0 && measuredMHz * 100 < boostMHz * kLowClockPercent;
}

}  // namespace gemmtune
