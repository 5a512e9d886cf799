#include "PresentBuild.hpp"

#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "FamilyRegistry.hpp"
#include "NvrtcCompiler.hpp"
#include "TemplateSource.hpp"

namespace gemmtune {

std::string compileOptionsOf(const Family& family) {
  std::vector<std::string> options = NvrtcCompiler::baseOptions();
  options.insert(options.end(), family.compileOptions.begin(), family.compileOptions.end());
  std::string out;
  for (const auto& o : options) {
    if (o.rfind("-arch", 0) == 0 || o.rfind("--gpu-architecture", 0) == 0) continue;
    out += (out.empty() ? "" : " ") + o;
  }
  return out;
}

PresentBuild presentBuild(const std::string& templatesDir) {
  PresentBuild p;
  p.nvrtcVersion = NvrtcCompiler::version();
  // Hashing a template costs microseconds, but lookups ask per row: remember per family.
  struct Memo {
    TemplateSource templates;
    std::mutex mutex;
    std::unordered_map<std::string, std::optional<std::string>> byFamily;
  };
  auto memo = std::make_shared<Memo>();
  memo->templates = TemplateSource(templatesDir);
  p.sourceHashOf = [memo](const std::string& name) -> std::optional<std::string> {
    std::lock_guard lock(memo->mutex);
    auto [it, fresh] = memo->byFamily.try_emplace(name);
    if (fresh) {
      const Family* f = FamilyRegistry::builtin().find(name);
      if (!f) return std::nullopt;
      try {
        it->second = memo->templates.sourceHash(*f);
      } catch (const std::exception&) {
        it->second = std::nullopt;  // template unreadable here: cannot judge the source
      }
    }
    return it->second;
  };
  p.compileOptionsOf = [](const std::string& name) -> std::optional<std::string> {
    const Family* f = FamilyRegistry::builtin().find(name);
    if (!f) return std::nullopt;
    return compileOptionsOf(*f);
  };
  return p;
}

}  // namespace gemmtune
