// LaneGroup: the GPUs one run tunes on, one worker process each (a "lane": each candidate is timed
// on whichever GPU is free). Identical GPUs only: their results are interchangeable. A GPU whose
// worker keeps failing its canary drops out and the others go on.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "ThreadPool.hpp"
#include "TuneOutcome.hpp"
#include "gemmtune/GpuSpec.hpp"

namespace gemmtune {

class WorkerClient;
struct EngineContext;

// One GPU of the group: its worker process and the run its rows belong to.
struct Lane {
  GpuSpec gpu;
  std::unique_ptr<WorkerClient> worker;
  std::int64_t runId = 0;
  int warmKeepingRuns = 0;  // cuBLAS runs that only kept the clock up while NVRTC worked
  bool lost = false;        // its worker failed its canary again and again: the others go on
  // Where its work runs when the group has several GPUs: the worker dies with the thread that
  // started it (PR_SET_PDEATHSIG), so every start and restart happens on this one.
  std::unique_ptr<ThreadPool> thread;
};

class LaneGroup {
 public:
  // Throws Error when the GPUs differ (one gpuFingerprint): tune them separately.
  explicit LaneGroup(std::vector<GpuSpec> gpus);
  ~LaneGroup();

  // One run per GPU in the results database (a row names the GPU that measured it), then a
  // worker on each.
  void begin(EngineContext& context);
  // Ends every GPU's run and stops its worker; what the GPUs did goes into `outcome`.
  void end(EngineContext& context, GpuOutcome& outcome);

  // Runs `work` on every live lane at once (inline for one). A lane that throws GpuUnhealthyError
  // is lost; once none is left that error is rethrown. Other errors stop all and are rethrown.
  void onLanes(const std::function<void(Lane&)>& work);
  Lane& first();  // the first live lane
  std::vector<const Lane*> live() const;

 private:
  void startWorker(const EngineContext& context, Lane& lane);

  std::vector<Lane> lanes_;
};

}  // namespace gemmtune
