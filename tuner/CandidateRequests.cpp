#include "CandidateRequests.hpp"

#include "FamilyPlans.hpp"
#include "WorkerClient.hpp"
#include "worker/ProblemLayout.hpp"

namespace gemmtune {

CandidateRequest requestFor(const Config& config, const CompileResult& compiled, const GemmShape& shape,
                            const TimingPolicy& timing) {
  CandidateRequest req;
  req.instance = config.name();
  req.cubin = compiled.cubin;
  req.loweredNames = compiled.loweredNames;
  req.plan = planLaunch(config, GemmProblem::packed(shape));
  for (const GemmProblem& p : ProblemLayout::checkProblems(Problem::of(shape)))
    req.checkLayouts.push_back({p, planLaunch(config, p)});
  req.timing = timing;
  // Tensor-core families answer for their accuracy against cuBLAS SGEMM's besides the checks of all.
  req.faithful = config.family->precision == PrecisionClass::faithful;
  return req;
}

CompileResult compiledOf(const db::ResultRecord& row) {
  CompileResult c;
  c.ok = !row.cubin.empty();
  c.cubin = row.cubin;
  c.loweredNames = splitLoweredNames(row.loweredName);
  if (!c.loweredNames.empty()) c.loweredName = c.loweredNames.front();
  return c;
}

double deadlineSecFor(const GemmShape& shape, const TimingPolicy& policy, bool faithful) {
  const double kernelMs = shape.flops() / 0.5e12 * 1e3;
  // The first faithful request of a problem builds its data sets: three FP64 references (values and
  // |A||B|) at a pessimistic 1 TFLOP/s, then eight launches of cuBLAS and the candidate.
  const double faithfulSec = faithful ? 6 * shape.flops() / 1e12 + 8 * kernelMs / 1e3 : 0;
  return WorkerClient::deadlineFor(policy, kernelMs) + faithfulSec;
}

}  // namespace gemmtune
