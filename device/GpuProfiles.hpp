// GpuProfiles: the limits of well-known GPUs, for planning and filtering without a GPU
// (`--gpu h100`). Each profile names where its numbers come from.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gemmtune/GpuSpec.hpp"

namespace gemmtune {

struct GpuProfile {
  std::string key;     // "h100": what --gpu accepts
  GpuSpec spec;        // spec.profile == key
  std::string source;  // where the limits come from
};

// Every offline profile, in a stable order.
const std::vector<GpuProfile>& gpuProfiles();
// Case-insensitive lookup by key; nullptr when unknown.
const GpuProfile* findGpuProfile(std::string_view key);
// "h100, h200, a100, ..."
std::string gpuProfileKeys();

}  // namespace gemmtune
