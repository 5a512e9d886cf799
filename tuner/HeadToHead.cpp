#include "HeadToHead.hpp"

#include "Compiler.hpp"
#include "LaunchPlan.hpp"
#include "WorkerClient.hpp"
#include "worker/ProblemLayout.hpp"
#include "worker/TimingStats.hpp"

namespace gemmtune {

CandidateRequest requestFor(const Config& config, const CompileResult& compiled, const GemmShape& shape,
                            const TimingPolicy& timing) {
  CandidateRequest req;
  req.instance = config.name();
  req.cubin = compiled.cubin;
  req.loweredNames = compiled.loweredNames;
  req.plan = planLaunch(config, GemmProblem::packed(shape.M, shape.N, shape.K));
  for (const GemmProblem& p : ProblemLayout::checkProblems(Problem{shape.M, shape.N, shape.K}))
    req.checkLayouts.push_back({p, planLaunch(config, p)});
  req.timing = timing;
  return req;
}

std::vector<std::optional<double>> timeHeadToHead(WorkerClient& worker, const Compiler& compiler,
                                                  const std::string& arch, const std::vector<Config>& configs,
                                                  const GemmShape& shape, int rounds, TimingPolicy policy) {
  policy.bestSoFarMs = 0;  // no early stop: every round is a full timing
  std::vector<std::optional<CandidateRequest>> requests;
  for (const Config& c : configs) {
    CompileResult compiled = compiler.compile(c, arch);
    if (!compiled.ok) {
      requests.emplace_back();
      continue;
    }
    CandidateRequest req = requestFor(c, compiled, shape, policy);
    req.verify = false;
    requests.emplace_back(std::move(req));
  }
  std::vector<std::vector<double>> samples(configs.size());
  const double deadline = WorkerClient::deadlineFor(policy, shape.flops() / 0.5e12 * 1e3);
  for (int round = 0; round < rounds; ++round)
    for (size_t i = 0; i < requests.size(); ++i) {
      if (!requests[i]) continue;
      CandidateResult r = worker.run(*requests[i], deadline);
      if (r.status == kStatusOk) samples[i].push_back(r.medianMs);
    }
  std::vector<std::optional<double>> out;
  for (auto& s : samples) {
    if (s.empty()) out.emplace_back();
    else out.emplace_back(summarize(std::move(s)).medianMs);
  }
  return out;
}

}  // namespace gemmtune
