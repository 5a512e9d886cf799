// LaneScheduler: a family's turn at a size on every GPU of the group. Each lane takes the
// strategy's next proposal, compiles it (ahead, CompileAhead), times or records it and tells the
// strategy, until the strategy is done, the --budget is spent or the run stops. A GPU lost
// mid-turn leaves its proposal to the others. What the strategy never proposed is recorded last.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <vector>

#include "engine/EngineContext.hpp"
#include "engine/SizeRun.hpp"

namespace gemmtune {

struct Lane;
class LaneGroup;
class CandidateTimer;
class CompileAhead;
class RankPruning;
class RowRecorder;
class SearchStrategy;
struct ScreenedFamily;

class LaneScheduler {
 public:
  LaneScheduler(EngineContext& context, RowRecorder& rows, CandidateTimer& timer, FamilyTurn& turn,
                ScreenedFamily& screened, SearchStrategy& strategy, const RankPruning& pruning, CompileAhead& ahead);

  // Each GPU of the group runs this loop (LaneGroup::onLanes); they share the strategy and
  // everything else under the context's mutex, which is released only while a compile or the
  // GPU works.
  void run(Lane& lane);
  // After the lanes, unless the run was stopped: every point never proposed gets its row.
  void recordNotProposed(LaneGroup& lanes);

 private:
  std::optional<size_t> nextProposal();
  // Handles `point` on `lane`; an error gives it back (to another GPU when this one is lost).
  // False when this lane's loop ends.
  bool take(size_t point, Lane& lane, std::unique_lock<std::mutex>& lock);
  // Waits for `point`'s compile, keeping the GPU warm meanwhile, then measures it.
  bool compileAndMeasure(size_t point, Lane& lane, std::unique_lock<std::mutex>& lock);
  // Times (or resumes, or records as rejected after compiling) the compiled `point` and tells
  // the strategy.
  bool measure(size_t point, Lane& lane, std::unique_lock<std::mutex>& lock);
  // A proposal in flight was told (or given back): a lane waiting for more may go on.
  void settle();
  void reportProgress();

  EngineContext& context_;
  RowRecorder& rows_;
  CandidateTimer& timer_;
  FamilyTurn& turn_;
  ScreenedFamily& screened_;
  SearchStrategy& strategy_;
  const RankPruning& pruning_;
  CompileAhead& ahead_;

  std::vector<bool> handled_;  // per point: proposed and taken by a lane
  double bestMs_ = 0;          // fastest complete timing of the turn: the worker cuts slower ones short
  bool classicDone_;           // the yardstick is timed even after the budget is spent
  const EngineClock::time_point sizeStart_;
  const int timedBefore_;
  int proposed_ = 0, inFlight_ = 0;
  std::deque<size_t> requeued_;      // proposals a lost GPU left unmeasured
  std::condition_variable settled_;  // a proposal in flight was told (or given back)
};

}  // namespace gemmtune
