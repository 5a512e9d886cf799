// The shapes the library recorded (db `seen` table, library/SeenRecorder.hpp) as a workload:
// what `gemmtune seen` lists and `gemmtune tune --seen` tunes.
#pragma once

#include <vector>

#include "ResultStore.hpp"
#include "ShapeFile.hpp"
#include "gemmtune/GpuSpec.hpp"

namespace gemmtune::cli {

// The problems recorded for these GPUs (by fingerprint), most time first, each weighted by its
// recorded time in ms (the weight a `--shapes` line carries); a problem recorded for several of
// them comes once, its times added. Empty when the store has none.
std::vector<WorkloadShape> seenWorkload(const db::ResultStore& store, const std::vector<GpuSpec>& gpus);

}  // namespace gemmtune::cli
