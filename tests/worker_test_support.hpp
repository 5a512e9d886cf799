// What the worker's GPU tests share: a short timing policy, and a candidate request for a problem
// as the tuner builds one (the timing plan for GemmProblem::packed, a plan per verification layout).
#pragma once

#include "CompileResult.hpp"
#include "FamilyPlans.hpp"
#include "WorkerProtocol.hpp"
#include "worker/ProblemLayout.hpp"

namespace gemmtune::test {

inline TimingPolicy quickTiming() {
  TimingPolicy p;
  p.warmupMs = 20;
  p.budgetMs = 50;
  p.minReps = 5;
  p.maxReps = 50;
  return p;
}

inline CandidateRequest requestFor(const Config& config, const CompileResult& r, const Problem& p,
                                   const TimingPolicy& timing) {
  CandidateRequest req;
  req.instance = config.name();
  req.cubin = r.cubin;
  req.loweredNames = r.loweredNames;
  req.plan = planLaunch(config, GemmProblem::packed(p.shape()));
  for (const GemmProblem& layout : ProblemLayout::checkProblems(p)) req.checkLayouts.push_back({layout, planLaunch(config, layout)});
  req.timing = timing;
  // No faithful checks (the tuner's requestFor asks them of tensor-core families): these tests are
  // about layouts, batches and faults; tests/faithful_gpu_test.cpp asks for them itself.
  return req;
}

}  // namespace gemmtune::test
