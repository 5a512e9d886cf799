#include "HeaderTrees.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <sstream>

#include "Family.hpp"
#include "gemmtune/Errors.hpp"

namespace gemmtune {

namespace fs = std::filesystem;

namespace {

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

fs::path programDir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path{} : exe.parent_path();
}

// The CUDA toolkit's include directory (CUTLASS includes the toolkit's headers and CCCL's).
std::optional<fs::path> toolkitIncludeDir() {
  std::vector<fs::path> candidates;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(var); v && *v) candidates.push_back(fs::path(v) / "include");
#ifdef GEMMTUNE_CUDA_INCLUDE_DIR
  candidates.emplace_back(GEMMTUNE_CUDA_INCLUDE_DIR);
#endif
  candidates.emplace_back("/usr/local/cuda/include");
  for (const auto& c : candidates)
    if (fs::exists(c / "cuda_runtime.h")) return c;
  return std::nullopt;
}

HeaderTreeLookup lookCutlass() {
  std::vector<fs::path> candidates;
  HeaderTreeLookup out;
  if (const char* v = std::getenv("GEMMTUNE_CUTLASS_DIR"); v && *v) {
    // Named by the user: used or refused, never silently replaced by another copy.
    if (!fs::exists(fs::path(v) / "cutlass" / "version.h")) {
      out.missing = fmt::format("GEMMTUNE_CUTLASS_DIR={} holds no cutlass/version.h (point it at CUTLASS's include directory)", v);
      return out;
    }
    candidates.emplace_back(v);
  }
  if (fs::path dir = programDir(); !dir.empty()) candidates.push_back(dir / ".." / "share" / "gemmtune" / "cutlass" / "include");
#ifdef GEMMTUNE_BUILD_DEPS_DIR
  candidates.push_back(fs::path(GEMMTUNE_BUILD_DEPS_DIR) / "cutlass" / "include");
#endif
  for (const auto& c : candidates) {
    const fs::path versionHeader = c / "cutlass" / "version.h";
    if (!fs::exists(versionHeader)) continue;
    std::string version = cutlassVersionFromHeader(readFile(versionHeader));
    if (version.empty()) {
      out.missing = fmt::format("CUTLASS at {} has no readable version in cutlass/version.h", c.string());
      return out;
    }
    auto toolkit = toolkitIncludeDir();
    if (!toolkit) {
      out.missing = "the CUDA toolkit's headers were not found (set CUDA_HOME): CUTLASS includes them";
      return out;
    }
    out.tree = HeaderTree{"cutlass", version,
                          {fs::weakly_canonical(c).string(), toolkit->string(), (*toolkit / "cccl").string()}};
    return out;
  }
  out.missing = "CUTLASS headers not found: run scripts/build.sh (it fetches the pinned nvidia-cutlass package), "
                "or set GEMMTUNE_CUTLASS_DIR to a CUTLASS include directory";
  return out;
}

}  // namespace

std::string cutlassVersionFromHeader(const std::string& text) {
  int parts[3];
  const char* names[3] = {"CUTLASS_MAJOR", "CUTLASS_MINOR", "CUTLASS_PATCH"};
  for (int i = 0; i < 3; ++i) {
    std::smatch m;
    const std::regex re(std::string("#define\\s+") + names[i] + "\\s+([0-9]+)");
    if (!std::regex_search(text, m, re) || m[1].length() > 6) return {};
    parts[i] = std::stoi(m[1].str());
  }
  return fmt::format("{}.{}.{}", parts[0], parts[1], parts[2]);
}

const HeaderTreeLookup& findHeaderTree(const std::string& name) {
  static std::mutex mutex;
  static std::map<std::string, HeaderTreeLookup> found;
  std::lock_guard lock(mutex);
  auto it = found.find(name);
  if (it != found.end()) return it->second;
  HeaderTreeLookup result;
  if (name == "cutlass") {
    result = lookCutlass();
  } else {
    result.missing = fmt::format("unknown header tree \"{}\" (known: cutlass)", name);
  }
  return found.emplace(name, std::move(result)).first->second;
}

std::optional<std::string> unavailableReason(const Family& family) {
  for (const auto& name : family.headerTrees)
    if (const HeaderTreeLookup& l = findHeaderTree(name); !l.tree) return l.missing;
  return std::nullopt;
}

const HeaderTree& requireHeaderTree(const std::string& name) {
  const HeaderTreeLookup& l = findHeaderTree(name);
  if (!l.tree) throw UnavailableError(l.missing);
  return *l.tree;
}

}  // namespace gemmtune
