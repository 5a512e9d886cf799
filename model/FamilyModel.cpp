#include "FamilyModel.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "SizeDistance.hpp"

namespace gemmtune {

long long tilesAlong(long long extent, long long tile) { return (extent + tile - 1) / tile; }

double compulsoryBytes(const db::ProblemKey& p) {
  const double m = double(p.m), n = double(p.n), k = double(p.k);
  const double cPasses = p.betaClass == "zero" ? 1.0 : 2.0;
  return 4.0 * (m * k + k * n + m * n * cPasses) * double(std::max(1LL, p.batch));
}

double streamedBytes(const db::ProblemKey& p, const KernelGeometry& g, const MachineRates& m) {
  const double bytes = compulsoryBytes(p);
  if (!(m.l2Bytes > 0) || g.tileM <= 0 || g.tileN <= 0) return bytes;
  // Blocks of one wave read a shared panel at the same time (L2 serves it once), so an operand is
  // streamed at most once per wave of its own matrix's blocks (batches are outermost in the grid);
  // without a known residency, once per row or column of tiles.
  const long long batches = std::max(1LL, p.batch);
  long long waves = std::numeric_limits<long long>::max();
  if (g.blocks > 0 && g.residency.blocksPerSm > 0 && m.smCount > 0) {
    const long long perWave = static_cast<long long>(m.smCount) * g.residency.blocksPerSm;
    const long long perMatrix = std::max(1LL, g.blocks / batches);
    waves = (perMatrix + perWave - 1) / perWave;
  }
  auto extraPasses = [&](double operandBytes, long long tiles) {
    const long long passes = std::max(1LL, std::min(tiles, waves));
    return operandBytes > m.l2Bytes / 2 ? operandBytes * double(passes - 1) : 0.0;
  };
  const double batch = double(batches);
  const double extraB = extraPasses(4.0 * double(p.k) * double(p.n), tilesAlong(p.m, g.tileM));
  const double extraA = extraPasses(4.0 * double(p.m) * double(p.k), tilesAlong(p.n, g.tileN));
  // Where both are too large, the grid's order keeps one operand's panel in L2 while it streams the
  // other: only one of them is read again, at best the cheaper.
  const double extra = extraA > 0 && extraB > 0 ? std::min(extraA, extraB) : extraA + extraB;
  return bytes + extra * batch;
}

double l2TrafficBytes(const db::ProblemKey& p, const KernelGeometry& g) {
  if (g.tileM <= 0 || g.tileN <= 0) return 0;
  const double m = double(p.m), n = double(p.n), k = double(p.k);
  const double tilesM = double(tilesAlong(p.m, g.tileM)), tilesN = double(tilesAlong(p.n, g.tileN));
  return 4.0 * k * (m * tilesN + n * tilesM) * double(std::max(1LL, p.batch));
}

double dramGBps(int memClockKhz, int memBusWidthBits) {
  return 2.0 * double(memClockKhz) * 1e3 * double(memBusWidthBits) / 8.0 / 1e9;
}

double l2GBps(int smCount, int smClockKhz) {
  return kL2BytesPerSmClock * double(smCount) * double(smClockKhz) * 1e3 / 1e9;
}

namespace {
// A block's k loop cannot run faster than its loads arrive: about 15 ns per element of K (0.5 µs
// per 32-deep k tile, about a global load's round trip; an empirical constant, blind to the
// pipeline's stages). It binds only where a block has little arithmetic per k step (small tiles:
// thin at tiny M and N over a long K, which ran 2-3x slower on an H100 than the model said).
// Chosen on the fa34ebd main job's rows and exact rows at 78 untuned shapes (bench/model_error;
// the 2026-11-26 main job held out): 10-15 ns lowered the error on both, 30 ns raised it on one.
// Without a known residency (blocks per SM) there is no wave count and no floor.
constexpr double kLatencyMsPerK = 15e-6;
}  // namespace

double rawMs(const db::ProblemKey& p, const KernelGeometry& g, const MachineRates& m) {
  const long long slices = std::max(1, g.slices);
  const double blockK = g.kPerBlock > 0 ? g.kPerBlock : double((p.k + slices - 1) / slices);
  const double blockFlops = 2.0 * double(g.tileM) * double(g.tileN) * (blockK + kBlockFixedK);
  const bool timed = m.peakGflops > 0 && m.smCount > 0;
  // Per SM, in FLOP/ms (1 GFLOP/s = 1e6 FLOP/ms); without a peak, one unit per block's work.
  const double smRate = timed ? m.peakGflops / m.smCount * 1e6 : blockFlops;
  double compute = 0;
  if (g.blocks > 0 && g.residency.blocksPerSm > 0 && g.residency.warpsPerBlock > 0 && m.smCount > 0)
    compute = launchCost(g.blocks, g.residency, m.smCount) * blockFlops / smRate;
  else  // nothing known of the launch: the work at the peak
    compute = double(std::max(1LL, g.blocks)) * blockFlops / (smRate * std::max(1, m.smCount));
  if (!timed) return compute;
  if (g.blocks > 0 && g.residency.blocksPerSm > 0) {  // every wave at least its blocks' k loop
    const double waves = std::ceil(double(g.blocks) / (double(m.smCount) * g.residency.blocksPerSm));
    compute = std::max(compute, waves * blockK * kLatencyMsPerK);
  }
  // Whichever level of the memory bounds it: DRAM (each operand once, more where it outgrows L2) or
  // L2 (every tile's panels: small tiles read the same rows many times).
  const double dram = m.dramGBps > 0 ? streamedBytes(p, g, m) / (m.dramGBps * 1e6) : 0;
  const double l2 = m.l2GBps > 0 ? l2TrafficBytes(p, g) / (m.l2GBps * 1e6) : 0;
  const double memory = std::max(dram, l2);
  const double reduction = m.dramGBps > 0 ? g.partialBytes / (m.dramGBps * 1e6) : 0;
  return std::max(compute, memory) + reduction + m.launchOverheadMs;
}

double rooflineMs(const db::ProblemKey& p, const MachineRates& m) {
  const double flops = 2.0 * double(p.m) * double(p.n) * double(p.k) * double(std::max(1LL, p.batch));
  if (!(m.peakGflops > 0)) return flops;
  const double memory = m.dramGBps > 0 ? compulsoryBytes(p) / (m.dramGBps * 1e6) : 0;
  return std::max(flops / (m.peakGflops * 1e6), memory) + m.launchOverheadMs;
}

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// The observation of `rows` nearest `p` (ties: the first).
const Observation* nearestOf(const db::ProblemKey& p, std::span<const Observation> rows) {
  const Observation* best = nullptr;
  double bestD = 0;
  for (const Observation& o : rows) {
    if (!(o.rawMs > 0) || !(o.measuredMs > 0)) continue;
    const double d = sizeDistance(p, o.problem);
    if (!best || d < bestD) best = &o, bestD = d;
  }
  return best;
}

}  // namespace

double ratioNear(const db::ProblemKey& p, std::span<const Observation> rows, db::ProblemKey* nearest) {
  const Observation* n = nearestOf(p, rows);
  if (!n) return 0;
  std::vector<double> ratios;
  for (const Observation& o : rows)
    if (o.problem == n->problem && o.rawMs > 0 && o.measuredMs > 0) ratios.push_back(o.ratio());
  if (nearest) *nearest = n->problem;
  return median(std::move(ratios));
}

double calibrationRatio(const db::ProblemKey& asked, std::span<const Observation> own, std::span<const Observation> family) {
  db::ProblemKey anchorAt;
  const double ownRatio = ratioNear(asked, own, &anchorAt);
  db::ProblemKey familyAt;
  const double familyHere = ratioNear(asked, family, &familyAt);
  if (!(ownRatio > 0)) return familyHere;
  double correction = 1.0;
  // Only where the family measured nearer the asked problem than this configuration did.
  if (familyHere > 0 && sizeDistance(asked, familyAt) < sizeDistance(asked, anchorAt)) {
    const double familyThere = ratioNear(anchorAt, family);
    if (familyThere > 0) correction = std::clamp(familyHere / familyThere, 1.0 / kMaxCorrection, kMaxCorrection);
  }
  return ownRatio * correction;
}

}  // namespace gemmtune
