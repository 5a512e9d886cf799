#include "StaleRows.hpp"

#include <nlohmann/json.hpp>

#include <tuple>

#include "FamilyRegistry.hpp"
#include "Lookup.hpp"
#include "gemmtune/Errors.hpp"

namespace gemmtune::serving {

CurrentFingerprints currentFingerprints(const std::vector<StoredGpu>& gpus) {
  std::map<std::string, const StoredGpu*> latest;
  for (const auto& g : gpus) {
    auto& cur = latest[g.spec.name];
    if (!cur || std::tie(g.lastRunAt, g.id) > std::tie(cur->lastRunAt, cur->id)) cur = &g;
  }
  CurrentFingerprints out;
  for (const auto& [name, g] : latest) out[name] = g->fingerprint;
  return out;
}

std::optional<Config> storedConfig(const StoredResult& r) {
  try {
    return FamilyRegistry::builtin().parseName(r.instance());
  } catch (const UsageError&) {
  }
  const Family* family = FamilyRegistry::builtin().find(r.family);
  if (r.status == "ok" || !family) return std::nullopt;
  auto params = nlohmann::json::parse(r.params, nullptr, false);
  if (!params.is_object()) return std::nullopt;
  Config c{family, {}, r.instance().ends_with("_guarded")};
  for (const auto& p : family->params) {
    auto it = params.find(p.name);
    if (it == params.end() || !it->is_number_integer() || *it < 1 || *it > 1 << 20) return std::nullopt;
    c.values.push_back(it->get<int>());
  }
  if (c.name() != r.instance()) return std::nullopt;
  return c;
}

StoredRowCheck checkStoredRow(const StoredResult& r, const PresentEnvironment& present,
                              const CurrentFingerprints& current) {
  StoredRowCheck out{storedConfig(r), {}};
  auto& stale = out.staleReasons;
  const Config* config = out.config ? &*out.config : nullptr;
  if (!config && !isCublasRow(r)) stale.push_back("unknown instance name");
  const std::string* familyName = config ? &config->family->name : nullptr;
  StoredKeyParts parts{r.key.driverVersion, r.key.nvrtcVersion, r.key.compileOptions, r.key.sourceHash,
                       r.key.methodVersion};
  for (auto& why : staleReasons(parts, familyName, present)) stale.push_back(std::move(why));
  auto fingerprint = current.find(r.gpuName);
  if (fingerprint == current.end() || fingerprint->second != r.key.gpuFingerprint)
    stale.push_back("GPU fingerprint changed");
  // A row filed under a family its instance name does not belong to cannot be placed or served.
  if (config && config->family->name != r.family) stale.push_back("family does not match the instance name");
  return out;
}

}  // namespace gemmtune::serving
