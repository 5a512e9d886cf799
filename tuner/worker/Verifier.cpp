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

bool sameProblem(const GemmProblem& x, const GemmProblem& y) {
  return x.m == y.m && x.n == y.n && x.k == y.k && x.layout == y.layout && x.lda == y.lda && x.ldb == y.ldb &&
         x.ldc == y.ldc && x.batch == y.batch && x.strideA == y.strideA && x.strideB == y.strideB &&
         x.strideC == y.strideC && x.pointerArrays == y.pointerArrays && x.alignA == y.alignA && x.alignB == y.alignB &&
         x.alignC == y.alignC && x.betaZero == y.betaZero;
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

// Inputs copied into the layout (transposed where op T), every word of C's allocation set to the
// canary, then every batch's C set to its start value (NaN when the check must not read it).
void prepare(const Check& c, const HelperKernels& k) {
  if (c.copyA) k.copyInto(c.packedA, c.a, c.args.layout.transA);
  if (c.copyB) k.copyInto(c.packedB, c.b, c.args.layout.transB);
  k.fillBits(DeviceMatrix::vector(c.out.alloc, c.out.place.allocElems), kGuardCanary);
  if (c.initialC)
    k.copyInto(c.initialC, c.c);
  else
    k.fillBits(c.c, std::bit_cast<std::uint32_t>(std::numeric_limits<float>::quiet_NaN()));
}

std::string checkName(const Check& c) { return fmt::format("{} ({})", c.name, c.layout); }

std::string plural(long long n, const char* one, const char* many) { return fmt::format("{} {}", n, n == 1 ? one : many); }

// " (batch 2)" for batched problems, nothing otherwise.
std::string batchNote(const Check& c, long long b) { return c.out.place.count > 1 ? fmt::format(" (batch {})", b) : ""; }

std::string describeFailure(const Check& c, const CompareStats& s, const Problem& p, const GpuContext& gpu) {
  const auto& cu = gpu.cu();
  const auto first = static_cast<long long>(s.firstBad);
  const long long b = first / (p.M * p.N), row = first % (p.M * p.N) / p.N, col = first % p.N;
  float got = 0, want = 0;
  const long long word = c.out.place.start(b) + row * c.out.place.ld + col;
  cu.check(cu.cuMemcpyDtoH(&got, c.out.alloc + 4ull * static_cast<std::uint64_t>(word), 4), "reading a wrong element");
  cu.check(cu.cuMemcpyDtoH(&want, c.ref + 4ull * s.firstBad, 4), "reading its reference");
  return fmt::format("{}: {} of {} elements wrong ({} NaN/Inf), first at ({}, {}){}: got {:g}, want {:g}, max error {:.3g}x tolerance",
                     checkName(c), s.bad, p.batch * p.M * p.N, s.nonFinite, row, col, batchNote(c, b), got, want,
                     s.maxRatio);
}

// Where word `index` of C's allocation lies relative to the batches' C: in a row's padding
// columns, after the last row of the nearest C below it, or before every C.
std::string guardPlace(const Check& c, std::uint64_t index) {
  const OperandPlacement& o = c.out.place;
  const auto i = static_cast<long long>(index);
  long long below = -1, lowest = 0;  // the batch whose C starts nearest below i; the batch whose C starts lowest
  for (long long b = 0; b < o.count; ++b) {
    if (o.start(b) <= i && (below < 0 || o.start(b) > o.start(below))) below = b;
    if (o.start(b) < o.start(lowest)) lowest = b;
  }
  if (below < 0) return plural(o.start(lowest) - i, "element", "elements") + " before C" + batchNote(c, lowest);
  const long long j = i - o.start(below);
  if (j >= o.span()) return plural(j - o.span() + 1, "element", "elements") + " after C's last row" + batchNote(c, below);
  return fmt::format("row {}, padding column {}{}", j / o.ld, j % o.ld, batchNote(c, below));
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
    const CompareStats s = k.compare(c.c, c.ref, c.absAB, tolerance(p, c.args.alpha), c.exact);
    if (s.bad) append(v.detail, describeFailure(c, s, p, gpu));
    // Every batch's C back to the canary: any word that differs now was written outside C.
    k.fillBits(c.c, kGuardCanary);
    const GuardStats g = k.scanCanaries(c.out.alloc, c.out.place.allocElems, kGuardCanary);
    v.maxError = std::max(v.maxError, s.maxRatio);
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

Verdict verifyEveryLayout(const ProblemData& data, const GpuContext& gpu, const HelperKernels& k,
                          const std::function<void(const SgemmArgs&)>& launch) {
  return runChecks(
      data, gpu, k, data.checks(), [](const Check&) { return std::string(); },
      [&](const Check& c) { launch(c.args); });
}

}  // namespace gemmtune
