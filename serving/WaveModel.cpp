#include "WaveModel.hpp"

#include <algorithm>

namespace gemmtune {

int blocksToSaturate(int blocksPerSm, int warpsPerBlock) {
  if (blocksPerSm <= 0 || warpsPerBlock <= 0) return 0;
  return std::clamp((8 + warpsPerBlock - 1) / warpsPerBlock, 1, blocksPerSm);
}

double predictMs(double msFrom, const db::ProblemKey& from, long long blocksFrom, const db::ProblemKey& to,
                 long long blocksTo, int saturating, int smCount) {
  auto flops = [](const db::ProblemKey& p) { return 2.0 * double(p.m) * double(p.n) * double(p.k); };
  if (blocksFrom <= 0 || blocksTo <= 0 || saturating <= 0 || smCount <= 0 || from.k <= 0)
    return msFrom * flops(to) / std::max(1.0, flops(from));
  const long long slots = static_cast<long long>(smCount) * saturating;
  auto waves = [&](long long blocks) { return static_cast<double>((blocks + slots - 1) / slots); };
  return msFrom * (static_cast<double>(to.k) / static_cast<double>(from.k)) * waves(blocksTo) / waves(blocksFrom);
}

}  // namespace gemmtune
