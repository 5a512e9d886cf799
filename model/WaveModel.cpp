#include "WaveModel.hpp"

#include <algorithm>
#include <cmath>

namespace gemmtune {

namespace {
constexpr int kWarpsToFillAnSm = 8;
}

double smThroughput(int warps) {
  return std::sqrt(std::clamp(static_cast<double>(warps) / kWarpsToFillAnSm, 0.0, 1.0));
}

double launchCost(long long blocks, Residency residency, int smCount) {
  const long long sms = smCount;
  // k blocks per SM, each of the wave's k blocks doing one block's work at k·warps' throughput.
  auto wave = [&](long long k) { return static_cast<double>(k) / smThroughput(static_cast<int>(k) * residency.warpsPerBlock); };
  const long long perSm = std::min<long long>(residency.blocksPerSm, (blocks + sms - 1) / sms);
  const long long fullWaves = blocks / (sms * perSm);
  const long long rest = blocks - fullWaves * sms * perSm;
  return static_cast<double>(fullWaves) * wave(perSm) + (rest > 0 ? wave((rest + sms - 1) / sms) : 0.0);
}

double predictMs(double msFrom, const db::ProblemKey& from, long long blocksFrom, const db::ProblemKey& to,
                 long long blocksTo, Residency residency, int smCount) {
  auto flops = [](const db::ProblemKey& p) { return 2.0 * double(p.m) * double(p.n) * double(p.k); };
  if (blocksFrom <= 0 || blocksTo <= 0 || residency.blocksPerSm <= 0 || residency.warpsPerBlock <= 0 || smCount <= 0 ||
      from.k <= 0)
    return msFrom * flops(to) / std::max(1.0, flops(from));
  return msFrom * (static_cast<double>(to.k) / static_cast<double>(from.k)) * launchCost(blocksTo, residency, smCount) /
         launchCost(blocksFrom, residency, smCount);
}

}  // namespace gemmtune
