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

double deadlineSecFor(const GemmShape& shape, const TimingPolicy& policy) {
  return WorkerClient::deadlineFor(policy, shape.flops() / 0.5e12 * 1e3);
}

}  // namespace gemmtune
