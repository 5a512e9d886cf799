// The present environment that stored rows are judged against: this build's facts
// (generator/PresentBuild) in the form db's staleness rules take (db::PresentEnvironment).
#pragma once

#include <string>

#include "CacheKey.hpp"

namespace gemmtune::serving {

// NVRTC and method versions of this build; per family, its compile options and the source hash of
// its template (embedded, or from `templatesDir`). The driver version is left unknown (set it
// where a driver is loaded).
db::PresentEnvironment presentEnvironment(const std::string& templatesDir = {});

}  // namespace gemmtune::serving
