#include "CandidateFilter.hpp"

#include <fmt/format.h>

namespace gemmtune {

namespace {

void reject(Candidate& c, CandidateStage stage, std::string limit, std::string reason) {
  c.stage = stage;
  c.limit = std::move(limit);
  c.reason = std::move(reason);
}

std::optional<std::string> gridViolation(const GpuSpec& gpu, const Dim3& g) {
  if (g.x > static_cast<unsigned>(gpu.maxGridDimX)) return fmt::format("x {} > {}", g.x, gpu.maxGridDimX);
  if (g.y > static_cast<unsigned>(gpu.maxGridDimY)) return fmt::format("y {} > {}", g.y, gpu.maxGridDimY);
  if (g.z > static_cast<unsigned>(gpu.maxGridDimZ)) return fmt::format("z {} > {}", g.z, gpu.maxGridDimZ);
  return std::nullopt;
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

std::optional<std::string> registerViolation(const GpuSpec& gpu, const Candidate& c, const Occupancy& o) {
  const int regs = c.compiled->resources.registers;
  if (regs > gpu.maxRegsPerThread) return fmt::format("{} > {} per thread", regs, gpu.maxRegsPerThread);
  const long long plain = static_cast<long long>(regs) * c.threadsPerBlock;
  // What the hardware checks: per-warp allocation units, warps rounded up to the sub-partitions.
  const int subPartitions = registerSubPartitions(gpu);
  const long long checked = static_cast<long long>(o.registersPerWarp) *
                            ((o.warpsPerBlock + subPartitions - 1) / subPartitions * subPartitions);
  if (checked <= gpu.regsPerBlock) return std::nullopt;
  if (checked == plain) return fmt::format("{}×{} = {} > {} per block", regs, c.threadsPerBlock, plain, gpu.regsPerBlock);
  return fmt::format("{}×{} → {} allocated > {} per block", regs, c.threadsPerBlock, checked, gpu.regsPerBlock);
}

std::string blockBounds(const Occupancy& o) {
  auto v = [](int n) { return n >= Occupancy::kUnlimited ? std::string("any") : std::to_string(n); };
  return fmt::format("threads allow {}, registers {}, smem {}, block limit {}", v(o.blocksByThreads),
                     v(o.blocksByRegisters), v(o.blocksBySharedMemory), v(o.blocksByBlockLimit));
}

}  // namespace

std::optional<std::string> smemLimitViolation(const GpuSpec& gpu, int staticBytes, int dynamicBytes) {
  const long long total = static_cast<long long>(staticBytes) + dynamicBytes;
  if (staticBytes > gpu.smemPerBlock)
    return fmt::format("static {} B > {} B per block (opt-in raises only dynamic shared memory)", staticBytes, gpu.smemPerBlock);
  if (gpu.smemPerBlockOptin > gpu.smemPerBlock && total > gpu.smemPerBlockOptin)
    return fmt::format("{} B > {} B opt-in maximum per block", total, gpu.smemPerBlockOptin);
  if (gpu.smemPerBlockOptin <= gpu.smemPerBlock && total > gpu.smemPerBlock)
    return fmt::format("{} B > {} B without opt-in (this GPU allows no more)", total, gpu.smemPerBlock);
  return std::nullopt;
}

Candidate checkBeforeCompile(const Config& config, const GpuSpec& gpu, const std::optional<GemmShape>& size) {
  const Family& f = *config.family;
  Candidate c;
  c.config = config;
  if (const Constraint* bad = config.violated()) {
    reject(c, CandidateStage::Static, "constraint", fmt::format("{}: {}", bad->name, bad->reason));
    return c;
  }
  c.threadsPerBlock = f.threadsPerBlock(config);
  c.staticSmemBytes = f.staticSmemBytes(config);
  c.dynamicSmemBytes = f.dynamicSmemBytes(config);
  c.smemOptIn = c.smemBytes() > gpu.smemPerBlock;
  if (size) c.grid = f.grid(config, size->M, size->N);

  if (c.threadsPerBlock > gpu.maxThreadsPerBlock)
    reject(c, CandidateStage::BeforeCompile, "threads", fmt::format("{} > {} per block", c.threadsPerBlock, gpu.maxThreadsPerBlock));
  else if (auto smem = smemLimitViolation(gpu, c.staticSmemBytes, c.dynamicSmemBytes))
    reject(c, CandidateStage::BeforeCompile, "smem", *smem);
  else if (c.grid)
    if (auto grid = gridViolation(gpu, *c.grid)) reject(c, CandidateStage::BeforeCompile, "grid", *grid);
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
  const Occupancy occ = computeOccupancy(gpu, {c.threadsPerBlock, r.resources.registers, c.staticSmemBytes, c.dynamicSmemBytes});
  c.occupancy = occ;
  if (r.resources.spillStoreBytes > 0 || r.resources.spillLoadBytes > 0)
    c.note = fmt::format("spills {} B stored, {} B loaded", r.resources.spillStoreBytes, r.resources.spillLoadBytes);

  if (auto regs = registerViolation(gpu, c, occ))
    reject(c, CandidateStage::AfterCompile, "regs", *regs);
  else if (auto smem = smemLimitViolation(gpu, c.staticSmemBytes, c.dynamicSmemBytes))
    reject(c, CandidateStage::AfterCompile, "smem", *smem);
  else if (occ.blocksPerSm < 1)
    reject(c, CandidateStage::AfterCompile, "occupancy", "0 blocks per SM (" + blockBounds(occ) + ")");
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
