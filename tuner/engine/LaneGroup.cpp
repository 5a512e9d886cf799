#include "engine/LaneGroup.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <future>
#include <string>

#include "gemmtune/Errors.hpp"
#include "NvrtcCompiler.hpp"
#include "WorkerClient.hpp"
#include "engine/EngineContext.hpp"

namespace gemmtune {

LaneGroup::LaneGroup(std::vector<GpuSpec> gpus) {
  const GpuSpec first = gpus.front();
  for (auto& g : gpus) {
    if (db::gpuFingerprint(g) != db::gpuFingerprint(first))
      throw Error(fmt::format("GPUs {} and {} differ ({} / {}): tune them separately", first.deviceIndex, g.deviceIndex,
                              first.name, g.name));
    Lane lane;
    lane.gpu = std::move(g);
    lanes_.push_back(std::move(lane));
  }
}

LaneGroup::~LaneGroup() = default;

void LaneGroup::begin(EngineContext& context) {
  for (Lane& lane : lanes_) {  // one run per GPU: a row names the GPU that measured it
    db::RunInfo info;
    info.gpu = lane.gpu;
    info.driverVersion = context.driverVersion;
    info.nvrtcVersion = NvrtcCompiler::version();
    info.commandLine = context.options.commandLine;
    lane.runId = context.store.beginRun(info);
  }
  onLanes([&](Lane& lane) { startWorker(context, lane); });
}

void LaneGroup::startWorker(const EngineContext& context, Lane& lane) {
  if (context.options.simulated) {
    std::vector<std::string> argv = context.options.simulated->workerArgv;
    for (auto& arg : argv)  // "{device}": which simulated GPU this worker plays
      for (size_t at; (at = arg.find("{device}")) != std::string::npos;)
        arg.replace(at, 8, std::to_string(lane.gpu.deviceIndex));
    lane.worker = std::make_unique<WorkerClient>(argv);
  } else {
    lane.worker = std::make_unique<WorkerClient>(lane.gpu.deviceIndex, context.options.selfExe);
  }
  spdlog::debug("worker on GPU {} ({}) ready", lane.gpu.deviceIndex, lane.worker->info().name);
}

void LaneGroup::end(EngineContext& context, GpuOutcome& outcome) {
  for (Lane& lane : lanes_) {
    context.store.endRun(lane.runId);
    outcome.deviceIndices.push_back(lane.gpu.deviceIndex);
    if (lane.lost) outcome.lostDevices.push_back(lane.gpu.deviceIndex);
    outcome.warmKeepingRuns += lane.warmKeepingRuns;
    if (lane.worker) outcome.workerRestarts += lane.worker->restarts();
    lane.worker.reset();
  }
}

Lane& LaneGroup::first() {
  for (Lane& lane : lanes_)
    if (!lane.lost) return lane;
  throw GpuUnhealthyError("every GPU of the group was lost");  // onLanes rethrows before this
}

std::vector<const Lane*> LaneGroup::live() const {
  std::vector<const Lane*> out;
  for (const Lane& lane : lanes_)
    if (!lane.lost) out.push_back(&lane);
  return out;
}

void LaneGroup::onLanes(const std::function<void(Lane&)>& work) {
  std::vector<Lane*> live;
  for (Lane& lane : lanes_)
    if (!lane.lost) live.push_back(&lane);
  std::vector<std::exception_ptr> errors(live.size());
  auto one = [&](size_t i) {
    try {
      work(*live[i]);
    } catch (...) {
      errors[i] = std::current_exception();
    }
  };
  if (lanes_.size() == 1) {
    one(0);
  } else {
    std::vector<std::future<void>> done;
    for (size_t i = 0; i < live.size(); ++i) {
      if (!live[i]->thread) live[i]->thread = std::make_unique<ThreadPool>(1);
      done.push_back(live[i]->thread->submit([&one, i] { one(i); }));
    }
    for (auto& d : done) d.get();
  }
  std::exception_ptr unhealthy;
  for (size_t i = 0; i < live.size(); ++i) {
    if (!errors[i]) continue;
    try {
      std::rethrow_exception(errors[i]);
    } catch (const GpuUnhealthyError& e) {
      live[i]->lost = true;
      unhealthy = errors[i];
      spdlog::warn("GPU {} dropped out of the run: {}", live[i]->gpu.deviceIndex, e.what());
    }  // anything else propagates as it is
  }
  if (unhealthy && std::all_of(lanes_.begin(), lanes_.end(), [](const Lane& l) { return l.lost; }))
    std::rethrow_exception(unhealthy);
}

}  // namespace gemmtune
