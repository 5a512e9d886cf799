// ProblemLayout: what the worker allocates and generates for one Problem — pure arithmetic, so
// the tuner can check a size fits in GPU memory before any GPU work.
#pragma once

#include <cstdint>

#include "WorkerProtocol.hpp"

namespace gemmtune {

struct ProblemLayout {
  long long aElems = 0, bElems = 0, cElems = 0;
  // Small-integer inputs lie in [-intRange, intRange]: at most 8, less when K is so large that
  // K·range² + 2·range could exceed 2^24 and FP32 partial sums would stop being exact.
  int intRange = 8;
  // A/B/C sets timing cycles through so that together they exceed twice the L2 cache: a small
  // problem otherwise runs from L2 and times faster than it will in real use.
  int rotationCopies = 1;
  // Peak device memory for the problem: both verification sets with their references and |A||B|,
  // the scratch C, the extra rotation copies and the |A|,|B| temporaries used while preparing.
  std::uint64_t deviceBytes = 0;

  static constexpr int kMaxRotationCopies = 64;
  // Throws UsageError for non-positive sizes or dimensions above INT_MAX.
  static ProblemLayout of(const Problem& p, long long l2Bytes);
};

}  // namespace gemmtune
