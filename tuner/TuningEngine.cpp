#include "TuningEngine.hpp"

#include <algorithm>

#include "CudaDriver.hpp"
#include "gemmtune/Errors.hpp"
#include "engine/BasisRun.hpp"
#include "engine/CandidateTimer.hpp"
#include "engine/CompileAhead.hpp"
#include "engine/EngineContext.hpp"
#include "engine/FamilyScreen.hpp"
#include "engine/FinalistRetimer.hpp"
#include "engine/LaneGroup.hpp"
#include "engine/LaneScheduler.hpp"
#include "engine/RowRecorder.hpp"
#include "engine/SizeRuns.hpp"
#include "search/SearchStrategy.hpp"

namespace gemmtune {

namespace {

const GpuSpec& firstOf(const std::vector<GpuSpec>& gpus) {
  if (gpus.empty()) throw Error("TuningEngine needs at least one GPU");
  return gpus.front();
}

}  // namespace

TuningEngine::TuningEngine(GpuSpec gpu, Compiler& compiler, db::ResultStore& store, const TuneOptions& options,
                           ProgressLine& progress, const std::atomic<bool>& stop)
    : TuningEngine(std::vector<GpuSpec>{std::move(gpu)}, compiler, store, options, progress, stop) {}

TuningEngine::TuningEngine(std::vector<GpuSpec> gpus, Compiler& compiler, db::ResultStore& store,
                           const TuneOptions& options, ProgressLine& progress, const std::atomic<bool>& stop)
    : context_(std::make_unique<EngineContext>(firstOf(gpus), compiler, store, options, progress, stop)),
      lanes_(std::make_unique<LaneGroup>(std::move(gpus))),
      rows_(std::make_unique<RowRecorder>(*context_, *lanes_)),
      screen_(std::make_unique<FamilyScreen>(*context_, *rows_)),
      timer_(std::make_unique<CandidateTimer>(*context_, *rows_)),
      finalists_(std::make_unique<FinalistRetimer>(*context_, *lanes_)),
      sizes_(std::make_unique<SizeRuns>(*context_, *lanes_, *rows_, *finalists_)),
      basis_(std::make_unique<BasisRun>(*context_, *rows_, *sizes_, *finalists_)) {}

TuningEngine::~TuningEngine() = default;

GpuOutcome TuningEngine::run() {
  EngineContext& ctx = *context_;
  auto start = EngineClock::now();
  GpuOutcome outcome;
  outcome.gpuName = ctx.gpu.name;
  ctx.driverVersion = ctx.options.simulated ? ctx.options.simulated->driverVersion : CudaDriver::get().version();
  ctx.gpuId = ctx.store.recordGpu(ctx.gpu);
  lanes_->begin(ctx);

  // Family by family, each at every size, smallest first (a family's search learns from its
  // smaller sizes). Families go one after another rather than sizes: the first size of a
  // slow-compiling family (CUTLASS: seconds per instance) compiles in the background while the
  // GPU times the earlier families at every size, instead of the GPU waiting for NVRTC at the
  // first size while the larger ones wait for their turn.
  std::vector<GemmShape> order = ctx.options.sizes;
  std::stable_sort(order.begin(), order.end(), [](const GemmShape& a, const GemmShape& b) { return a.flops() < b.flops(); });
  prefetchFirstSizes(ctx, order);
  for (const Family* f : ctx.options.families) {
    for (const auto& s : order) {
      if (ctx.stopped()) break;
      if (!ctx.options.selected(s, f)) continue;  // another shard's unit: no baseline, no run row for it
      SizeRun& size = sizes_->use(s);
      tuneFamily(*f, size);
      finalists_->dropCubinsOfNonFinalists(*f, size.timed);
    }
    if (ctx.options.basis && !ctx.stopped()) basis_->prefetch(*f, order);
  }
  ctx.progressLine.clear();
  outcome.sizes = finishSizes(order);
  if (ctx.options.basis && !ctx.stopped()) {
    outcome.basis = basis_->run(order, secondsSince(start), [&](const Family& f, SizeRun& size, const std::vector<Config>& given) {
      tuneFamily(f, size, &given);
      finalists_->dropCubinsOfNonFinalists(f, size.timed);
    });
    ctx.progressLine.clear();
    outcome.basis->runShare = outcome.basis->seconds / std::max(1e-9, secondsSince(start));
  }

  outcome.interrupted = ctx.stopped();
  lanes_->end(ctx, outcome);
  outcome.gpuBusySeconds = ctx.gpuBusySec;
  outcome.wallSeconds = secondsSince(start);
  return outcome;
}

std::vector<SizeOutcome> TuningEngine::finishSizes(const std::vector<GemmShape>& order) {
  std::map<std::string, SizeOutcome> bySize;
  for (const auto& s : order) {
    SizeRun* size = sizes_->find(s);
    if (!size) continue;
    // The finalists are re-timed there (a warm rerun's were re-timed already: no problem to set).
    if (!context_->stopped() && finalists_->needsRounds(*size)) sizes_->use(s);
    bySize[s.str()] = sizes_->finish(*size);
  }
  std::vector<SizeOutcome> out;  // in the order asked for
  for (const auto& s : context_->options.sizes)
    if (auto it = bySize.find(s.str()); it != bySize.end()) out.push_back(it->second);
  return out;
}

void TuningEngine::tuneFamily(const Family& family, SizeRun& size, const std::vector<Config>* given) {
  EngineContext& ctx = *context_;
  FamilyTurn turn(family, size);
  // The rejected are recorded already.
  ScreenedFamily screened = given ? screen_->screenGiven(turn, *given) : screen_->screen(turn);
  // A given list is timed as given; the family's strategy learns from its own picks only.
  std::unique_ptr<SearchStrategy> fixed = given ? makeExhaustiveSearch() : nullptr;
  SearchStrategy& strategy = fixed ? *fixed : strategyFor(family);
  strategy.start(SearchContext{turn.shape, ctx.gpu.smCount}, std::move(screened.points));
  const RankPruning pruning(screened, *rows_, strategy, ctx.options, turn.shape);
  CompileAhead ahead(ctx, screened, strategy.plan(), pruning);
  LaneScheduler scheduler(ctx, *rows_, *timer_, turn, screened, strategy, pruning, ahead);
  lanes_->onLanes([&](Lane& lane) { scheduler.run(lane); });
  if (!ctx.stopped()) scheduler.recordNotProposed(*lanes_);  // stopped: a resumed run times them
  size.out.families.push_back(std::move(turn.outcome));
}

SearchStrategy& TuningEngine::strategyFor(const Family& family) {
  auto it = strategies_.find(&family);
  if (it == strategies_.end()) {
    StrategyOptions so;
    so.carry = context_->options.carry;
    it = strategies_.emplace(&family, makeStrategy(context_->options.strategy, so)).first;
  }
  return *it->second;
}

}  // namespace gemmtune
