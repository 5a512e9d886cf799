// GpuSpecJson: a GpuSpec as JSON (for --json output and anything that records the GPU).
#pragma once

#include <nlohmann/json.hpp>

#include "gemmtune/GpuSpec.hpp"

namespace gemmtune {

nlohmann::json toJson(const GpuSpec& gpu);

}  // namespace gemmtune
