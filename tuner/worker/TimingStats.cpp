#include "TimingStats.hpp"

#include <algorithm>
#include <cmath>

namespace gemmtune {

namespace {
double quantile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}
}  // namespace

TimingSummary summarize(std::vector<double> samplesMs) {
  TimingSummary s;
  if (samplesMs.empty()) return s;
  std::sort(samplesMs.begin(), samplesMs.end());
  s.reps = static_cast<int>(samplesMs.size());
  s.minMs = samplesMs.front();
  s.medianMs = quantile(samplesMs, 0.5);
  s.spread = s.medianMs > 0 ? (quantile(samplesMs, 0.75) - quantile(samplesMs, 0.25)) / s.medianMs : 0;
  return s;
}

TimingStop timingStop(const TimingPolicy& p, const TimingSummary& s, double timedMsTotal) {
  const int minReps = std::max(1, p.minReps);
  if (s.reps >= std::max(minReps, p.maxReps)) return TimingStop::MaxReps;
  if (s.reps < minReps) return TimingStop::Continue;
  if (p.bestSoFarMs > 0 && s.medianMs > p.earlyStopRatio * p.bestSoFarMs) return TimingStop::Slower;
  if (s.spread <= p.spreadTarget) return TimingStop::Spread;
  if (timedMsTotal >= p.budgetMs) return TimingStop::Budget;
  return TimingStop::Continue;
}

}  // namespace gemmtune
