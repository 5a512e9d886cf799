// EngineContext: what every phase of one tuning run shares (tuner/engine/: the TuningEngine's
// phases). The run's inputs, its GPU's identity in the results database, and what the lanes
// (one per GPU) share while a family is tuned: the lock, the GPU seconds and whether the run is
// stopping.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <utility>

#include "Compiler.hpp"
#include "ProgressLine.hpp"
#include "ResultStore.hpp"
#include "TuneOptions.hpp"
#include "gemmtune/GpuSpec.hpp"

namespace gemmtune {

using EngineClock = std::chrono::steady_clock;

inline double secondsSince(EngineClock::time_point t) {
  return std::chrono::duration<double>(EngineClock::now() - t).count();
}

struct EngineContext {
  EngineContext(GpuSpec firstGpu, Compiler& compiler, db::ResultStore& store, const TuneOptions& options,
                ProgressLine& progressLine, const std::atomic<bool>& stop)
      : gpu(std::move(firstGpu)), compiler(compiler), store(store), options(options), progressLine(progressLine),
        stop(stop) {}

  GpuSpec gpu;  // the group's first GPU: limits, fingerprint and arch are the same for all
  Compiler& compiler;
  db::ResultStore& store;
  const TuneOptions options;
  ProgressLine& progressLine;
  const std::atomic<bool>& stop;  // SIGINT/SIGTERM, polled between candidates

  std::int64_t gpuId = 0;  // set when the run begins
  int driverVersion = 0;

  std::mutex mutex;  // what the lanes share while a family is tuned: store, strategy, outcomes
  double gpuBusySec = 0;
  bool interrupted = false;

  // Stopped from outside, or by a lane that saw the stop, an interrupted timing or an error.
  bool stopped() const { return stop || interrupted; }
};

}  // namespace gemmtune
