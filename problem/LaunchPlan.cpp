#include "LaunchPlan.hpp"

namespace gemmtune {

LaunchPlan LaunchPlan::refused(std::string why) {
  LaunchPlan p;
  p.refusal = std::move(why);
  return p;
}

const std::vector<KernelArg>& sgemmKernelArgs() {
  using A = KernelArg;
  static const std::vector<KernelArg> args{A::M, A::N, A::K, A::Alpha, A::A, A::Lda, A::B, A::Ldb, A::Beta, A::C, A::Ldc, A::Batch};
  return args;
}

}  // namespace gemmtune
