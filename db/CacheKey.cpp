#include "CacheKey.hpp"

#include <fmt/format.h>

#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "GemmShape.hpp"
#include "Quote.hpp"
#include "Sha256.hpp"

namespace gemmtune::db {

std::string currentMethodVersion() {
  return fmt::format("tune{}.time{}.verify{}", kTunerMethodVersion, kTimingMethodVersion, kVerifyMethodVersion);
}

std::string gpuFingerprint(const GpuSpec& g) {
  // A JSON array keeps the serialisation unambiguous whatever the name contains.
  nlohmann::json parts = {"gpu-fingerprint-v1", g.name,
                          g.ccMajor, g.ccMinor, g.smCount, g.maxThreadsPerBlock, g.maxThreadsPerSm,
                          g.maxBlocksPerSm, g.warpSize, g.regsPerSm, g.regsPerBlock, g.maxRegsPerThread,
                          g.regAllocUnit, g.smemPerSm, g.smemPerBlock, g.smemPerBlockOptin,
                          g.smemReservedPerBlock, g.l2Bytes, g.memClockKhz, g.memBusWidthBits};
  return Sha256::of(parts.dump());
}

std::string CacheKey::hash() const {
  nlohmann::json parts = {"cache-key-v1", gpuFingerprint, driverVersion, nvrtcVersion, arch, compileOptions,
                          sourceHash, methodVersion, instance, problem.m, problem.n, problem.k,
                          problem.layout, problem.betaClass};
  // A longer array: no batch 1 key can equal a batched one.
  if (problem.batch != 1) parts.push_back(problem.batch);
  return Sha256::of(parts.dump());
}

ProblemKey problemKeyOf(const GemmShape& s, std::string betaClass) {
  return ProblemKey{s.M, s.N, s.K, s.layout.text(), std::move(betaClass), s.batch};
}

GemmShape shapeOf(const ProblemKey& key) {
  return GemmShape{key.m, key.n, key.k, Layout::parse(key.layout).value_or(Layout{}), key.batch};
}

std::string layoutAndBatchSuffix(const ProblemKey& p) {
  std::string out = p.layout == "nn" ? std::string() : " " + p.layout;
  if (p.batch != 1) out += fmt::format(" batch {}", p.batch);
  return out;
}

std::string problemKeyProblem(const ProblemKey& p) {
  if (p.m <= 0 || p.n <= 0 || p.k <= 0) return fmt::format("problem size {}x{}x{} is not positive", p.m, p.n, p.k);
  if (!Layout::parse(p.layout))
    return fmt::format("layout {} is not one of nn, nt, tn, tt", quoteInput(p.layout));
  if (p.batch < 1) return fmt::format("batch {} is not positive", p.batch);
  if (p.betaClass.empty()) return "the beta class must be named";
  return {};
}

std::vector<std::string> staleReasons(const StoredKeyParts& row, const std::string* family,
                                      const PresentEnvironment& present) {
  std::vector<std::string> reasons;
  if (present.driverVersion && row.driverVersion != *present.driverVersion)
    reasons.push_back(fmt::format("driver {} (now {})", row.driverVersion, *present.driverVersion));
  if (present.nvrtcVersion && row.nvrtcVersion != *present.nvrtcVersion)
    reasons.push_back(fmt::format("NVRTC {} (now {})", row.nvrtcVersion, *present.nvrtcVersion));
  if (family && present.compileOptionsOf)
    if (auto now = present.compileOptionsOf(*family); now && *now != row.compileOptions)
      reasons.push_back("compile options changed");
  if (row.methodVersion != present.methodVersion)
    reasons.push_back(fmt::format("method {} (now {})", row.methodVersion, present.methodVersion));
  if (family && present.sourceHashOf) {
    auto now = present.sourceHashOf(*family);
    if (now && *now != row.sourceHash) reasons.push_back("template source changed");
  }
  return reasons;
}

}  // namespace gemmtune::db
