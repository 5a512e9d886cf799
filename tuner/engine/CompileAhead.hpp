// CompileAhead: compiles run ahead of the GPU along the strategy's plan, a window of twice the
// compile jobs, so the GPU waits for NVRTC only where NVRTC is slower than timing, and what the
// strategy never proposes is never compiled. An interrupted run drops the queue (cancelPending).
#pragma once

#include <future>
#include <vector>

#include "CompileResult.hpp"
#include "SizeSpec.hpp"

namespace gemmtune {

struct EngineContext;
struct ScreenedFamily;
class RankPruning;

class CompileAhead {
 public:
  // `plan`: the strategy's (SearchStrategy::plan), indices of search points.
  CompileAhead(EngineContext& context, const ScreenedFamily& screened, const std::vector<size_t>& plan,
               const RankPruning& pruning);
  // The `proposed`-th proposal was made: the plan is submitted up to a window beyond it.
  void advance(size_t proposed);
  // Candidate `i`'s compile: the one submitted ahead, else one submitted now.
  std::shared_future<CompileResult> compileOf(size_t i);
  // Candidate `i` is compiled: its result lives on in the candidate.
  void release(size_t i) { compiles_[i] = {}; }

 private:
  void submit(size_t i);  // unless submitted already

  EngineContext& context_;
  const ScreenedFamily& screened_;
  const std::vector<size_t>& plan_;
  const RankPruning& pruning_;
  const size_t window_;
  size_t submitted_ = 0;
  std::vector<std::shared_future<CompileResult>> compiles_;  // per candidate
};

// Every family's first size in each layout queues its compiles when the run begins (`order`: the
// sizes in the order they are tuned).
void prefetchFirstSizes(EngineContext& context, const std::vector<GemmShape>& order);

}  // namespace gemmtune
