#include "Verifier.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "gemmtune/Errors.hpp"

namespace gemmtune {

namespace {

float tolerance(const Problem& p, float alpha) {
  return static_cast<float>(4.0 * std::sqrt(static_cast<double>(p.K)) * std::ldexp(1.0, -24) * std::fabs(alpha));
}

DeviceMatrix operandA(const SgemmArgs& a) { return {a.a, a.m, a.k, a.lda}; }
DeviceMatrix operandB(const SgemmArgs& a) { return {a.b, a.k, a.n, a.ldb}; }
DeviceMatrix operandC(const SgemmArgs& a) { return {a.c, a.m, a.n, a.ldc}; }

bool sameProblem(const GemmProblem& x, const GemmProblem& y) {
  return x.m == y.m && x.n == y.n && x.k == y.k && x.lda == y.lda && x.ldb == y.ldb && x.ldc == y.ldc &&
         x.alignA == y.alignA && x.alignB == y.alignB && x.alignC == y.alignC && x.betaZero == y.betaZero;
}

// The plan sent for the problem `args` pose. Matching on the problem of the launch itself (its real
// pointers' alignment included) also proves the worker laid the operands out as the parent planned.
const LaunchPlan& planFor(const std::vector<CheckLayout>& layouts, const SgemmArgs& args) {
  const GemmProblem want = problemOf(args);
  for (const CheckLayout& l : layouts)
    if (sameProblem(l.problem, want)) return l.plan;
  throw UsageError(fmt::format("malformed request: no launch plan for the check layout {}{} (the tuner and its worker "
                               "disagree on the verification layouts: are they the same build?)",
                               want.text(), want.betaZero ? " beta=0" : ""));
}

// Inputs copied into the layout, every word of C's allocation set to the canary, then C itself
// set to its start value (NaN when the check must not read it).
void prepare(const Check& c, const HelperKernels& k) {
  if (c.args.a != c.packedA) k.copyInto(c.packedA, operandA(c.args));
  if (c.args.b != c.packedB) k.copyInto(c.packedB, operandB(c.args));
  k.fillBits(DeviceMatrix::vector(c.out.alloc, c.out.allocElems), kGuardCanary);
  if (c.initialC)
    k.copyInto(c.initialC, operandC(c.args));
  else
    k.fillBits(operandC(c.args), std::bit_cast<std::uint32_t>(std::numeric_limits<float>::quiet_NaN()));
}

std::string checkName(const Check& c) { return fmt::format("{} ({})", c.name, c.layout); }

std::string plural(long long n, const char* one, const char* many) { return fmt::format("{} {}", n, n == 1 ? one : many); }

std::string describeFailure(const Check& c, const CompareStats& s, const Problem& p, const GpuContext& gpu) {
  const auto& cu = gpu.cu();
  const long long row = static_cast<long long>(s.firstBad) / p.N, col = static_cast<long long>(s.firstBad) % p.N;
  float got = 0, want = 0;
  const CUdeviceptr cAddr = c.args.c + 4ull * static_cast<std::uint64_t>(row * c.args.ldc + col);
  cu.check(cu.cuMemcpyDtoH(&got, cAddr, 4), "reading a wrong element");
  cu.check(cu.cuMemcpyDtoH(&want, c.ref + 4ull * s.firstBad, 4), "reading its reference");
  return fmt::format("{}: {} of {} elements wrong ({} NaN/Inf), first at ({}, {}): got {:g}, want {:g}, max error {:.3g}x tolerance",
                     checkName(c), s.bad, p.M * p.N, s.nonFinite, row, col, got, want, s.maxRatio);
}

// Where word `index` of C's allocation lies relative to C: before it, after its last row, or in
// a row's padding columns.
std::string guardPlace(const Check& c, std::uint64_t index) {
  const long long j = static_cast<long long>(index) - c.out.front, ld = c.args.ldc;
  const long long end = static_cast<long long>(c.args.m) * ld;
  if (j < 0) return plural(-j, "element", "elements") + " before C";
  if (j >= end) return plural(j - end + 1, "element", "elements") + " after C's last row";
  return fmt::format("row {}, padding column {}", j / ld, j % ld);
}

std::string describeGuards(const Check& c, const GuardStats& g) {
  return fmt::format("{}: wrote outside C: {} changed (first at {})", checkName(c),
                     plural(static_cast<long long>(g.changed), "canary", "canaries"), guardPlace(c, g.firstChanged));
}

void append(std::string& list, const std::string& item) { list += (list.empty() ? "" : "; ") + item; }

void appendOnce(std::string& list, const std::string& item) {
  if (list.find(item) == std::string::npos) append(list, item);
}

// Runs `checks`: each one `refusal` returns text for is skipped (and the text noted); the others
// are prepared, launched and judged.
Verdict runChecks(const ProblemData& data, const GpuContext& gpu, const HelperKernels& k, const std::vector<Check>& checks,
                  const std::function<std::string(const Check&)>& refusal,
                  const std::function<void(const Check&)>& launch) {
  const Problem& p = data.problem();
  Verdict v;
  for (const Check& c : checks) {
    if (std::string why = refusal(c); !why.empty()) {
      appendOnce(v.skipped, why);
      continue;
    }
    prepare(c, k);
    launch(c);
    gpu.sync();  // a fault of the candidate surfaces here, before the checker runs
    ++v.checksRun;
    const CompareStats s = k.compare(operandC(c.args), c.ref, c.absAB, tolerance(p, c.args.alpha), c.exact);
    const GuardStats g = k.scanGuards(c.out.alloc, c.out.allocElems, c.out.front, operandC(c.args), kGuardCanary);
    v.maxError = std::max(v.maxError, s.maxRatio);
    if (s.bad) append(v.detail, describeFailure(c, s, p, gpu));
    if (g.changed) append(v.detail, describeGuards(c, g));
    v.ok = v.ok && s.bad == 0 && g.changed == 0;
  }
  return v;
}

}  // namespace

Verdict verify(const ProblemData& data, const GpuContext& gpu, const HelperKernels& k,
               const std::vector<CheckLayout>& layouts, const PlanLauncher& launch) {
  const std::vector<Check> checks = data.checks();
  for (const Check& c : checks) planFor(layouts, c.args);  // a missing plan refuses the request before any launch
  return runChecks(
      data, gpu, k, checks,
      [&](const Check& c) {
        const LaunchPlan& plan = planFor(layouts, c.args);
        return plan.runnable() ? std::string() : fmt::format("{} layout not checked: {}", c.layout, plan.refusal);
      },
      [&](const Check& c) { launch(planFor(layouts, c.args), c.args); });
}

Verdict verify(const ProblemData& data, const GpuContext& gpu, const HelperKernels& k,
               const std::function<void(const SgemmArgs&)>& launch) {
  return runChecks(
      data, gpu, k, data.packedChecks(), [](const Check&) { return std::string(); },
      [&](const Check& c) { launch(c.args); });
}

}  // namespace gemmtune
