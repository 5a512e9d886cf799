#include "CandidateFilter.hpp"

#include "LaunchLimits.hpp"

#include <fmt/format.h>

namespace gemmtune {

namespace {

void reject(Candidate& c, CandidateStage stage, std::string limit, std::string reason) {
  c.stage = stage;
  c.limit = std::move(limit);
  c.reason = std::move(reason);
}

// The first compiler error line, enough to tell configurations apart in a table.
std::string firstError(const std::string& log) {
  size_t pos = log.find("error");
  if (pos == std::string::npos) return "see the compile log";
  size_t start = log.rfind('\n', pos);
  start = start == std::string::npos ? 0 : start + 1;
  size_t end = log.find('\n', pos);
  return log.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

}  // namespace

Candidate checkBeforeCompile(const Config& config, const GpuSpec& gpu, const std::optional<GemmShape>& size) {
  const Family& f = *config.family;
  Candidate c;
  c.config = config;
  if (const Constraint* bad = config.violated()) {
    reject(c, CandidateStage::Static, "constraint", fmt::format("{}: {}", bad->name, bad->reason));
    return c;
  }
  if (const TargetConstraint* bad = config.violatedOn(gpu)) {
    reject(c, CandidateStage::Static, "constraint", fmt::format("{}: {}", bad->name, bad->reason));
    return c;
  }
  c.threadsPerBlock = f.threadsPerBlock(config);
  c.staticSmemBytes = f.staticSmemBytes(config);
  c.dynamicSmemBytes = f.dynamicSmemBytes(config);
  c.smemOptIn = c.smemBytes() > gpu.smemPerBlock;
  if (auto v = blockLimitViolation(gpu, c.threadsPerBlock, c.staticSmemBytes, c.dynamicSmemBytes)) {
    reject(c, CandidateStage::BeforeCompile, v->limit, v->reason);
    return c;
  }
  if (!size) return c;
  const LaunchPlan plan = planLaunch(config, GemmProblem::packed(*size));
  if (!plan.runnable()) {
    reject(c, CandidateStage::BeforeCompile, "plan", plan.refusal);
    return c;
  }
  c.grid = plan.mainLaunch().grid;
  c.oneWave = plan.mainLaunch().oneWave;
  for (const KernelLaunch& l : plan.launches)
    if (auto v = gridLimitViolation(gpu, l.grid)) {
      reject(c, CandidateStage::BeforeCompile, v->limit, v->reason);
      break;
    }
  return c;
}

void checkAfterCompile(Candidate& c, const GpuSpec& gpu, std::shared_ptr<const CompileResult> compiled,
                       const std::optional<GemmShape>& size, const FilterOptions& options) {
  if (!c.accepted()) return;
  c.compiled = std::move(compiled);
  const CompileResult& r = *c.compiled;
  if (!r.ok) {
    reject(c, CandidateStage::Compile, "", firstError(r.log));
    return;
  }
  if (r.resources.registers < 0) {
    reject(c, CandidateStage::AfterCompile, "resources", "no register count in the ptxas log");
    return;
  }
  c.staticSmemBytes = r.resources.staticSmemBytes;
  c.smemOptIn = c.smemBytes() > gpu.smemPerBlock;
  const KernelFootprint footprint{c.threadsPerBlock, r.resources.registers, c.staticSmemBytes, c.dynamicSmemBytes};
  c.occupancy = computeOccupancy(gpu, footprint);
  if (c.oneWave && c.grid && c.occupancy)  // the blocks it will run: one wave at this occupancy
    c.grid->x = static_cast<unsigned>(oneWaveBlocks(c.grid->x, gpu.smCount, c.occupancy->blocksPerSm));
  if (r.resources.spillStoreBytes > 0 || r.resources.spillLoadBytes > 0)
    c.note = fmt::format("spills {} B stored, {} B loaded", r.resources.spillStoreBytes, r.resources.spillLoadBytes);

  if (auto v = kernelLimitViolation(gpu, footprint))
    reject(c, CandidateStage::AfterCompile, v->limit, v->reason);
  else if (options.rejectSpills && !c.note.empty())
    reject(c, CandidateStage::AfterCompile, "spills", c.note);
  else if (options.prune && size && c.grid) {
    const long long blocks = static_cast<long long>(c.grid->x) * c.grid->y * c.grid->z;
    if (blocks < gpu.smCount) {
      c.stage = CandidateStage::Pruned;
      c.limit = "underfill";
      c.reason = fmt::format("{} blocks < {} SMs at size {}", blocks, gpu.smCount, size->str());
    }
  }
}

}  // namespace gemmtune
