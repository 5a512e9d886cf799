// PresentBuild: what this build compiles with now — the NVRTC version, each family's compile
// options and the source hash of its template. The tuner keys new rows with it and serving judges
// stored rows against it (serving/PresentEnvironment), so the two can never disagree.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "Family.hpp"

namespace gemmtune {

// NVRTC's base options plus the family's own, as cache keys store them: space-separated, the
// target architecture left out (it is a key part of its own).
std::string compileOptionsOf(const Family& family);

// Per built-in family name: the compile options and template source hash a new row would get
// (nullopt for a name no built-in family has, or a template unreadable here).
struct PresentBuild {
  std::string nvrtcVersion;
  std::function<std::optional<std::string>(const std::string& family)> compileOptionsOf;
  std::function<std::optional<std::string>(const std::string& family)> sourceHashOf;
};

// This build, its templates embedded or read from `templatesDir`. Source hashes are computed on
// first use and remembered per family (lookups ask per row).
PresentBuild presentBuild(const std::string& templatesDir = {});

}  // namespace gemmtune
