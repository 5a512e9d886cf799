#include "LaunchPlan.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace gemmtune {

LaunchPlan LaunchPlan::refused(std::string why) {
  LaunchPlan p;
  p.refusal = std::move(why);
  return p;
}

const KernelLaunch& LaunchPlan::mainLaunch() const {
  for (const KernelLaunch& l : launches)
    if (l.kernel == 0) return l;
  throw std::logic_error("a launch plan without its main kernel (kernel 0): " +
                         (refusal.empty() ? std::string("no launches") : refusal));
}

long long oneWaveBlocks(long long planned, int smCount, int blocksPerSm) {
  if (smCount <= 0 || blocksPerSm <= 0) return planned;
  return std::min(planned, static_cast<long long>(smCount) * blocksPerSm);
}

const std::vector<KernelArg>& sgemmKernelArgs() {
  using A = KernelArg;
  static const std::vector<KernelArg> args{A::M, A::N, A::K, A::Alpha, A::A, A::Lda, A::B, A::Ldb, A::Beta, A::C, A::Ldc, A::Batch};
  return args;
}

}  // namespace gemmtune
