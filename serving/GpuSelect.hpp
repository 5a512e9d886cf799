// GpuSelect: which GPU a `--gpu` argument means. `auto` asks the driver through a detector that
// start-up code registers (device/GpuDetect); any other value names a GPU stored in the
// database — by profile key ("h100"), name ("NVIDIA H100 80GB HBM3", case-insensitive, or a
// unique part of it) or fingerprint prefix (8+ hex digits).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ResultStore.hpp"
#include "gemmtune/GpuSpec.hpp"

namespace gemmtune::serving {

// Serving reads what db stores.
using namespace gemmtune::db;

// Detects a GPU of this machine: "auto" (the current one) or a driver index ("1").
using GpuDetector = std::function<GpuSpec(std::string_view selector)>;

// The `--gpu auto` / `--gpu INDEX` hook. Until one is registered, detectGpu() throws NoGpuError.
void setAutoGpuDetector(GpuDetector detector);
GpuSpec detectGpu(std::string_view selector = "auto");

struct SelectedGpu {
  GpuSpec spec;                    // limits to validate against: live when detected, else stored
  std::string fingerprint;
  std::optional<StoredGpu> stored; // absent when the detected GPU has no rows yet
  bool detected = false;
};

// Throws UsageError when the selector matches no stored GPU or several different ones.
// `auto` without a detector falls back to the only GPU in the database, if there is exactly one;
// a number is the GPU of that index on this machine (`query --gpu 1` after `tune --gpu all`).
SelectedGpu selectGpu(const ResultStore& store, std::string_view selector);

// "4096" (M = N = K) or "4096x2048x1024"; throws UsageError.
ProblemKey parseProblemSize(std::string_view text);

}  // namespace gemmtune::serving
