#include "engine/CandidateTimer.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>

#include "CandidateRequests.hpp"
#include "ClockRule.hpp"
#include "WorkerClient.hpp"
#include "engine/EngineContext.hpp"
#include "engine/LaneGroup.hpp"
#include "engine/RowRecorder.hpp"

namespace gemmtune {

std::optional<double> CandidateTimer::time(const Candidate& c, const std::string& srcHash, double bestSoFarMs,
                                           FamilyTurn& turn, Lane& lane, std::unique_lock<std::mutex>& lock) {
  db::ResultRecord rec = rows_.rowFor(c, srcHash, turn.shape);
  ++turn.size.progress.done;
  if (const db::StoredResult* stored = rows_.storedRow(rec.key)) {
    // Resumed: measured by an earlier, interrupted run with the same cache key.
    return rows_.recordResumed(*stored, c, turn);
  }

  CandidateRequest req = requestFor(c.config, *c.compiled, turn.shape, context_.options.timing);
  req.timing.bestSoFarMs = bestSoFarMs;
  lock.unlock();  // the other GPUs go on meanwhile
  auto t0 = EngineClock::now();
  CandidateResult r = measure(req, c.config, turn.shape, lane);
  lock.lock();
  double busy = secondsSince(t0);
  context_.gpuBusySec += busy;
  turn.size.gpuSec += busy;
  if (r.status == kStatusInterrupted) {
    --turn.size.progress.done;
    context_.interrupted = true;
    context_.compiler.cancelPending();
    return std::nullopt;
  }
  return rows_.recordTimed(std::move(rec), r, c, turn, lane.runId);
}

CandidateResult CandidateTimer::measure(const CandidateRequest& req, const Config& config, const GemmShape& shape,
                                        Lane& lane) {
  CandidateResult r = lane.worker->run(req, deadlineSecFor(shape, req.timing, req.faithful));
  if (r.status == kStatusWorkerDied) {
    // A worker killed from outside (the OOM killer, a kill -9) says nothing about the kernel: it
    // runs once more on the fresh worker, and only a second death is recorded as the kernel's.
    spdlog::warn("{} at {}: {} on GPU {}; measuring it again", config.name(), shape.str(), r.detail,
                 lane.gpu.deviceIndex);
    CandidateResult again = lane.worker->run(req, deadlineSecFor(shape, req.timing, req.faithful));
    if (again.status == kStatusWorkerDied) again.detail = fmt::format("twice: {}; then {}", r.detail, again.detail);
    r = again;
  }
  if (r.status == kStatusOk && clockWasLow(r, lane)) {
    // Timed while the GPU was far below its boost clock (it idles at a few hundred MHz while
    // NVRTC works): timed again, verified already; the row keeps the clock it was timed at.
    spdlog::debug("{} at {}: timed at {} MHz, below {} % of {} MHz: timing again", config.name(), shape.str(),
                  r.smClockMHz, kLowClockPercent, lane.worker->info().maxClockMHz);
    CandidateRequest again = req;
    again.verify = false;
    CandidateResult second = lane.worker->run(again, deadlineSecFor(shape, again.timing, again.faithful));
    if (second.status == kStatusOk) {
      // From the verification of the first: its error and its notes (skipped layouts, faithful figures).
      second.maxError = r.maxError;
      if (!r.detail.empty()) second.detail = second.detail.empty() ? r.detail : second.detail + "; " + r.detail;
    }
    if (second.status == kStatusOk || second.status == kStatusInterrupted) r = second;
  }
  return r;
}

bool CandidateTimer::clockWasLow(const CandidateResult& r, const Lane& lane) const {
  return belowSustainedClock(r.smClockMHz, lane.worker->info().maxClockMHz);
}

void CandidateTimer::keepGpuWarmUntil(const std::shared_future<CompileResult>& compile, const GemmShape& shape,
                                      Lane& lane) {
  // Left idle, the GPU drops to a few hundred MHz within milliseconds and the next candidate
  // would be timed on the way back up: short cuBLAS runs at this size hold the clock meanwhile.
  TimingPolicy warm = context_.options.timing;
  warm.warmupMs = 0;
  warm.budgetMs = 20;
  warm.minReps = 1;
  warm.bestSoFarMs = 0;
  while (!context_.stop && compile.wait_for(std::chrono::milliseconds(10)) == std::future_status::timeout) {
    lane.worker->cublas(warm, deadlineSecFor(shape, warm));
    ++lane.warmKeepingRuns;
  }
}

}  // namespace gemmtune
