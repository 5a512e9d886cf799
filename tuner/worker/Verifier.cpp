#include "Verifier.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace gemmtune {

namespace {

float tolerance(const Problem& p, float alpha) {
  return static_cast<float>(4.0 * std::sqrt(static_cast<double>(p.K)) * std::ldexp(1.0, -24) * std::fabs(alpha));
}

std::string describeFailure(const Check& c, const CompareStats& s, const Problem& p, const GpuContext& gpu) {
  const auto& cu = gpu.cu();
  const long long cols = p.N;
  const auto i = static_cast<long long>(s.firstBad);
  float got = 0, want = 0;
  const CUdeviceptr cAddr = c.args.c + 4ull * s.firstBad, refAddr = c.ref + 4ull * s.firstBad;
  cu.check(cu.cuMemcpyDtoH(&got, cAddr, 4), "reading a wrong element");
  cu.check(cu.cuMemcpyDtoH(&want, refAddr, 4), "reading its reference");
  return fmt::format("{}: {} of {} elements wrong ({} NaN/Inf), first at ({}, {}): got {:g}, want {:g}, max error {:.3g}x tolerance",
                     c.name, s.bad, p.M * p.N, s.nonFinite, i / cols, i % cols, got, want, s.maxRatio);
}

}  // namespace

Verdict verify(const ProblemData& data, const GpuContext& gpu, const HelperKernels& k,
               const std::function<void(const SgemmArgs&)>& launch) {
  const auto& cu = gpu.cu();
  const Problem& p = data.problem();
  const long long n = data.layout().cElems;
  Verdict v;
  for (const Check& c : data.checks()) {
    if (c.initialC)
      cu.check(cu.cuMemcpyDtoD(c.args.c, c.initialC, 4ull * static_cast<unsigned long long>(n)), "setting C");
    else
      k.fillConstant(c.args.c, n, std::numeric_limits<float>::quiet_NaN());
    launch(c.args);
    gpu.sync();  // a fault of the candidate surfaces here, before the checker runs
    CompareStats s = k.compare(c.args.c, c.ref, c.absAB, n, tolerance(p, c.args.alpha), c.exact);
    v.maxError = std::max(v.maxError, s.maxRatio);
    if (s.bad == 0) continue;
    v.ok = false;
    v.detail += (v.detail.empty() ? "" : "; ") + describeFailure(c, s, p, gpu);
  }
  return v;
}

}  // namespace gemmtune
