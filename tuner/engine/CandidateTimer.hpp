// CandidateTimer: one accepted candidate on one lane's GPU. Verifies and times it (or resumes
// the row an earlier run stored), taking the timing again when the worker was killed from
// outside or the GPU was far below its boost clock, and keeps the GPU warm while NVRTC works.
#pragma once

#include <future>
#include <mutex>
#include <optional>
#include <string>

#include "Candidate.hpp"
#include "CompileResult.hpp"
#include "WorkerProtocol.hpp"
#include "engine/SizeRun.hpp"

namespace gemmtune {

struct EngineContext;
struct Lane;
class RowRecorder;

class CandidateTimer {
 public:
  CandidateTimer(EngineContext& context, RowRecorder& rows) : context_(context), rows_(rows) {}

  // Verifies and times `c` on `lane` (or resumes its stored row); its median when ok. Called
  // with `lock` (the context's mutex) held; released while the GPU works. `bestSoFarMs` lets the
  // worker cut a clearly slower candidate short (0: never).
  std::optional<double> time(const Candidate& c, const std::string& srcHash, double bestSoFarMs, FamilyTurn& turn,
                             Lane& lane, std::unique_lock<std::mutex>& lock);
  // Runs short cuBLAS timings at `shape` until `compile` is ready (or the run stops).
  void keepGpuWarmUntil(const std::shared_future<CompileResult>& compile, const GemmShape& shape, Lane& lane);

 private:
  // The worker's answer to `req`, taken again where the first one cannot be trusted.
  CandidateResult measure(const CandidateRequest& req, const Config& config, const GemmShape& shape, Lane& lane);
  // A timing taken far below the GPU's boost clock (ClockRule.hpp) is taken again.
  bool clockWasLow(const CandidateResult& r, const Lane& lane) const;

  EngineContext& context_;
  RowRecorder& rows_;
};

}  // namespace gemmtune
