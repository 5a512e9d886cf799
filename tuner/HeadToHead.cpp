#include "HeadToHead.hpp"

#include "CandidateRequests.hpp"
#include "Compiler.hpp"
#include "WorkerClient.hpp"
#include "worker/TimingStats.hpp"

namespace gemmtune {

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
  const double deadline = deadlineSecFor(shape, policy);
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
