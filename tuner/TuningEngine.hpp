// TuningEngine: tunes every requested family at every requested size on one GPU, or on a group of
// identical GPUs that share the work (one worker process per GPU, a "lane": each candidate is
// timed on whichever GPU is free). Candidates go from the space (filters with reasons) through
// NVRTC (in the background, ahead of the GPUs) to a worker process (verify, then time), and every
// one ends as a result row in the DB, in the run of the GPU that measured it. Finalists are
// re-timed interleaved with cuBLAS on one GPU before a winner is declared. Then each family's
// finalists are timed on a small built-in basis of shape regimes (tuner/BasisShapes.hpp), within
// a share of the run's time. The work is done in named phases (tuner/engine/, one job per file);
// this class drives them.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <vector>

#include "Compiler.hpp"
#include "ProgressLine.hpp"
#include "ResultStore.hpp"
#include "TuneOptions.hpp"
#include "TuneOutcome.hpp"
#include "gemmtune/GpuSpec.hpp"

namespace gemmtune {

class SearchStrategy;
struct EngineContext;
class LaneGroup;
class RowRecorder;
class FamilyScreen;
class CandidateTimer;
class FinalistRetimer;
class SizeRuns;
class BasisRun;
struct SizeRun;

class TuningEngine {
 public:
  // `stop` is polled between candidates (SIGINT/SIGTERM): the run then records what it has
  // measured and returns with `interrupted` set.
  TuningEngine(GpuSpec gpu, Compiler& compiler, db::ResultStore& store, const TuneOptions& options,
               ProgressLine& progress, const std::atomic<bool>& stop);
  // Identical GPUs (one gpuFingerprint): their results are interchangeable, so they split the
  // candidates. A GPU whose worker keeps failing its canary drops out and the others go on.
  TuningEngine(std::vector<GpuSpec> gpus, Compiler& compiler, db::ResultStore& store, const TuneOptions& options,
               ProgressLine& progress, const std::atomic<bool>& stop);
  ~TuningEngine();

  // Throws GpuUnhealthyError (exit 75) when the worker's known-good canary keeps failing.
  GpuOutcome run();

 private:
  // One family's turn at one size, phase by phase (tuner/engine/): its search strategy's pick of
  // the space, or exactly `given` (the basis: a fixed list, in that order).
  void tuneFamily(const Family& family, SizeRun& size, const std::vector<Config>* given = nullptr);
  // Every size tuned, in `order`: finalists re-timed (unless the run stopped), bests declared.
  std::vector<SizeOutcome> finishSizes(const std::vector<GemmShape>& order);
  SearchStrategy& strategyFor(const Family& family);

  std::unique_ptr<EngineContext> context_;
  std::unique_ptr<LaneGroup> lanes_;
  std::unique_ptr<RowRecorder> rows_;
  std::unique_ptr<FamilyScreen> screen_;
  std::unique_ptr<CandidateTimer> timer_;
  std::unique_ptr<FinalistRetimer> finalists_;
  std::unique_ptr<SizeRuns> sizes_;
  std::unique_ptr<BasisRun> basis_;
  // One search strategy per family for the whole run: it learns from every size it has seen.
  std::map<const Family*, std::unique_ptr<SearchStrategy>> strategies_;
};

}  // namespace gemmtune
