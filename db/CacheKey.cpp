#include "CacheKey.hpp"

#include <fmt/format.h>

#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "NvrtcCompiler.hpp"
#include "Sha256.hpp"
#include "TemplateSource.hpp"

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
  return Sha256::of(parts.dump());
}

std::string joinCompileOptions(const std::vector<std::string>& options) {
  std::string out;
  for (const auto& o : options) {
    if (o.rfind("-arch", 0) == 0 || o.rfind("--gpu-architecture", 0) == 0) continue;
    out += (out.empty() ? "" : " ") + o;
  }
  return out;
}

PresentEnvironment PresentEnvironment::thisBuild(const std::string& templatesDir) {
  PresentEnvironment p;
  p.nvrtcVersion = NvrtcCompiler::version();
  p.compileOptions = joinCompileOptions(NvrtcCompiler::baseOptions());
  // Hashing a template costs microseconds, but lookups ask per row: remember per family.
  struct Memo {
    TemplateSource templates;
    std::mutex mutex;
    std::unordered_map<const Family*, std::optional<std::string>> byFamily;
  };
  auto memo = std::make_shared<Memo>();
  memo->templates = TemplateSource(templatesDir);
  p.sourceHashOf = [memo](const Config& config) -> std::optional<std::string> {
    std::lock_guard lock(memo->mutex);
    auto [it, fresh] = memo->byFamily.try_emplace(config.family);
    if (fresh) {
      try {
        it->second = Sha256::of(memo->templates.get(*config.family));
      } catch (const std::exception&) {
        it->second = std::nullopt;  // template unreadable here: cannot judge the source
      }
    }
    return it->second;
  };
  return p;
}

std::vector<std::string> staleReasons(const StoredKeyParts& row, const Config* config,
                                      const PresentEnvironment& present) {
  std::vector<std::string> reasons;
  if (present.driverVersion && row.driverVersion != *present.driverVersion)
    reasons.push_back(fmt::format("driver {} (now {})", row.driverVersion, *present.driverVersion));
  if (present.nvrtcVersion && row.nvrtcVersion != *present.nvrtcVersion)
    reasons.push_back(fmt::format("NVRTC {} (now {})", row.nvrtcVersion, *present.nvrtcVersion));
  if (present.compileOptions && row.compileOptions != *present.compileOptions)
    reasons.push_back("compile options changed");
  if (row.methodVersion != present.methodVersion)
    reasons.push_back(fmt::format("method {} (now {})", row.methodVersion, present.methodVersion));
  if (config && present.sourceHashOf) {
    auto now = present.sourceHashOf(*config);
    if (now && *now != row.sourceHash) reasons.push_back("template source changed");
  }
  return reasons;
}

}  // namespace gemmtune::db
