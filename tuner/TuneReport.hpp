// TuneReport: the end-of-run summary of `gemmtune tune` — an aligned table per size, or JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "TuneOutcome.hpp"

namespace gemmtune {

std::string formatTuneTable(const std::vector<GpuOutcome>& outcomes);
nlohmann::json tuneJson(const std::vector<GpuOutcome>& outcomes);

}  // namespace gemmtune
