// PresentBuild: what this build compiles with now — NVRTC version, each family's compile options
// and template source hash. The tuner keys new rows with it and staleness judges stored rows
// against it, so the two can never disagree.
#pragma once

#include <string>

#include "CacheKey.hpp"
#include "Family.hpp"

namespace gemmtune::serving {

// NVRTC's base options plus the family's own, joined as cache keys store them.
std::string compileOptionsOf(const Family& family);

// The present environment for judging rows: NVRTC and method versions of this build; per family,
// its compile options and the source hash of its template (embedded, or from `templatesDir`).
// The driver version is left unknown (set it where a driver is loaded).
db::PresentEnvironment presentEnvironment(const std::string& templatesDir = {});

}  // namespace gemmtune::serving
