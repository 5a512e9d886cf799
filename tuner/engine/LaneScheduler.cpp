#include "engine/LaneScheduler.hpp"

#include <fmt/format.h>

#include "CandidateFilter.hpp"
#include "gemmtune/Errors.hpp"
#include "engine/CandidateTimer.hpp"
#include "engine/CompileAhead.hpp"
#include "engine/FamilyScreen.hpp"
#include "engine/LaneGroup.hpp"
#include "engine/RowRecorder.hpp"
#include "search/SearchStrategy.hpp"

namespace gemmtune {

namespace {

// Why the rest of an over-budget size is not timed: the basis's share of the run, or --budget.
std::string budgetReason(const SizeRun& size, const TuneOptions& options) {
  if (size.deadline && EngineClock::now() >= *size.deadline) return size.deadlineReason;
  return fmt::format("--budget {} s spent at this size", options.budgetSec);
}

}  // namespace

LaneScheduler::LaneScheduler(EngineContext& context, RowRecorder& rows, CandidateTimer& timer, FamilyTurn& turn,
                             ScreenedFamily& screened, SearchStrategy& strategy, const RankPruning& pruning,
                             CompileAhead& ahead)
    : context_(context), rows_(rows), timer_(timer), turn_(turn), screened_(screened), strategy_(strategy),
      pruning_(pruning), ahead_(ahead), handled_(screened.indexOf.size(), false),
      classicDone_(!screened.hasClassicPoint()), sizeStart_(EngineClock::now()),
      timedBefore_(turn.size.out.timed) {}

void LaneScheduler::run(Lane& lane) {
  std::unique_lock lock(context_.mutex);
  for (;;) {
    // Once the budget is spent (the classic configuration is still timed), the rest is pruned:budget.
    if (overBudget(turn_.size, context_.options) && classicDone_) break;
    if (context_.stopped()) {
      context_.interrupted = true;
      context_.compiler.cancelPending();
      break;
    }
    std::optional<size_t> proposal = nextProposal();
    if (!proposal) {
      if (inFlight_ == 0) break;
      settled_.wait(lock);  // the strategy may want more once the results in flight are told
      continue;
    }
    if (handled_.at(*proposal)) continue;  // a strategy proposes each point once; never time one twice
    if (pruning_.keptReason(*proposal)) continue;  // not timed, not told: recorded pruned again in recordNotProposed
    handled_[*proposal] = true;
    ++inFlight_;
    ahead_.advance(static_cast<size_t>(++proposed_));
    if (!take(*proposal, lane, lock)) break;
  }
}

std::optional<size_t> LaneScheduler::nextProposal() {
  if (requeued_.empty()) return strategy_.next();
  const size_t point = requeued_.front();
  requeued_.pop_front();
  return point;
}

bool LaneScheduler::take(size_t point, Lane& lane, std::unique_lock<std::mutex>& lock) {
  try {
    return compileAndMeasure(point, lane, lock);
  } catch (const GpuUnhealthyError&) {
    // This GPU is gone (onLanes drops it): another one measures the candidate.
    if (!lock.owns_lock()) lock.lock();
    handled_[point] = false;
    requeued_.push_back(point);
    settle();
    throw;
  } catch (...) {
    if (!lock.owns_lock()) lock.lock();
    context_.interrupted = true;  // an error ends every lane's loop; onLanes rethrows it
    settle();
    throw;
  }
}

bool LaneScheduler::compileAndMeasure(size_t point, Lane& lane, std::unique_lock<std::mutex>& lock) {
  const size_t i = screened_.indexOf[point];
  std::shared_future<CompileResult> compile = ahead_.compileOf(i);
  lock.unlock();
  timer_.keepGpuWarmUntil(compile, turn_.shape, lane);
  std::shared_ptr<const CompileResult> compiled;
  try {
    compiled = std::make_shared<const CompileResult>(compile.get());
  } catch (const std::future_error&) {
    // Dropped by another lane's cancelPending: the run is stopping; a resumed run measures it.
    lock.lock();
    context_.interrupted = true;
    settle();
    return false;
  }
  lock.lock();
  ahead_.release(i);
  screened_.sourceHashes[i] = compiled->sourceHash;
  checkAfterCompile(screened_.candidates[i], context_.gpu, compiled, turn_.shape, context_.options.filter);
  return measure(point, lane, lock);
}

bool LaneScheduler::measure(size_t point, Lane& lane, std::unique_lock<std::mutex>& lock) {
  Candidate& c = screened_.candidateOf(point);
  const std::string& srcHash = screened_.sourceHashOf(point);
  const bool yardstick = screened_.isClassic(c.config);
  Measurement m;
  if (c.occupancy) m.blocksPerSm = c.occupancy->blocksPerSm;
  if (c.accepted() || (c.stage == CandidateStage::Pruned && rows_.hasStoredRow(c, srcHash, turn_.shape))) {
    const std::vector<Timed>& timed = turn_.size.timed;
    const size_t timedCount = timed.size();
    const double bestSoFarMs = yardstick ? 0 : bestMs_;  // the yardstick is never cut short
    m.medianMs = timer_.time(c, srcHash, bestSoFarMs, turn_, lane, lock);
    if (context_.interrupted) {
      settle();
      return false;
    }
    const bool complete = timed.size() > timedCount && !timed.back().partial;
    if (m.medianMs && complete && (bestMs_ == 0 || *m.medianMs < bestMs_)) bestMs_ = *m.medianMs;
  } else {
    rows_.recordUntimed(c, srcHash, turn_);
  }
  classicDone_ = classicDone_ || yardstick;
  strategy_.tell(point, m);
  settle();
  reportProgress();
  return true;
}

void LaneScheduler::settle() {
  --inFlight_;
  settled_.notify_all();
}

void LaneScheduler::reportProgress() {
  ProgressState& progress = turn_.size.progress;
  const int measured = turn_.size.out.timed - timedBefore_;
  if (measured > 0) progress.etaSeconds = secondsSince(sizeStart_) / measured * strategy_.expectedRemaining();
  context_.progressLine.update(progress);
}

void LaneScheduler::recordNotProposed(LaneGroup& lanes) {
  // What the strategy did not propose is recorded with its reason (the caller skips this when
  // the run was stopped: a resumed run times it then). A stored final row outranks pruning:
  // pruning is relative to one run's ranking and budget, so a resumed run may prune what the
  // interrupted one measured, and must not overwrite it.
  std::unique_lock lock(context_.mutex);  // uncontended: the lanes are done
  std::vector<db::ResultRecord> batch;
  for (size_t r = 0; r < handled_.size(); ++r) {
    if (handled_[r]) continue;
    Candidate& c = screened_.candidateOf(r);
    const std::string& srcHash = screened_.sourceHashOf(r);
    if (rows_.hasStoredRow(c, srcHash, turn_.shape)) {
      Measurement m;
      m.medianMs = timer_.time(c, srcHash, 0, turn_, lanes.first(), lock);  // resumes
      strategy_.tell(r, m);
      continue;
    }
    c.stage = CandidateStage::Pruned;
    if (const std::string* kept = pruning_.keptReason(r)) {
      c.limit = "rank";
      c.reason = *kept;
    } else if (overBudget(turn_.size, context_.options)) {
      c.limit = "budget";
      c.reason = budgetReason(turn_.size, context_.options);
    } else {
      c.limit = "rank";
      c.reason = strategy_.notTimedReason(r);
    }
    rows_.recordUntimed(c, srcHash, turn_, &batch);
  }
  rows_.recordBatch(batch);
}

}  // namespace gemmtune
