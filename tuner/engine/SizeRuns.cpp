#include "engine/SizeRuns.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "CandidateRequests.hpp"
#include "WorkerClient.hpp"
#include "engine/EngineContext.hpp"
#include "engine/FinalistRetimer.hpp"
#include "engine/LaneGroup.hpp"
#include "engine/RowRecorder.hpp"

namespace gemmtune {

namespace {

// The family's best at the size, and the size's best over the families so far.
void declareBest(FamilyOutcome& fo, SizeOutcome& out, const std::vector<Timed>& timed) {
  std::vector<const Timed*> mine;
  for (const auto& t : timed)
    if (t.family->name == fo.family) mine.push_back(&t);
  std::sort(mine.begin(), mine.end(), [](const Timed* a, const Timed* b) {
    if (a->partial != b->partial) return !a->partial;  // complete statistics rank first
    return a->medianMs < b->medianMs;
  });
  if (!mine.empty()) {
    fo.bestInstance = mine.front()->instance;
    fo.bestMs = mine.front()->medianMs;
    fo.bestPartial = mine.front()->partial;
    if (out.bestInstance.empty() || fo.bestMs < out.bestMs) {
      out.bestInstance = fo.bestInstance;
      out.bestMs = fo.bestMs;
    }
  }
  for (const auto& t : timed)
    if (t.instance == fo.classicInstance) fo.classicMs = t.medianMs;
}

}  // namespace

SizeRun& SizeRuns::open(const GemmShape& shape) {
  auto [it, first] = runs_.try_emplace(shape.str());
  SizeRun& run = it->second;
  if (first) {
    run.out.shape = shape;
    run.progress.gpu = context_.gpu.name;
    run.progress.size = shape.str();
    if (context_.options.resume) rows_.readStoredRows(shape);
  }
  return run;
}

SizeRun& SizeRuns::use(const GemmShape& shape) {
  SizeRun& run = open(shape);
  if (current_ == &run) return run;
  current_ = &run;
  if (!run.prepared) {
    prepare(run, shape);
    return run;
  }
  lanes_.onLanes([&](Lane& lane) {
    auto t0 = EngineClock::now();  // the worker prepares it again: random data, cuBLAS references
    lane.worker->setProblem(Problem::of(shape));
    std::lock_guard lock(context_.mutex);
    context_.gpuBusySec += secondsSince(t0);
  });
  return run;
}

SizeRun* SizeRuns::find(const GemmShape& shape) {
  auto it = runs_.find(shape.str());
  return it != runs_.end() ? &it->second : nullptr;
}

void SizeRuns::prepare(SizeRun& run, const GemmShape& shape) {
  run.prepared = true;

  // cuBLAS goes first at every size, with a long warm-up: it brings each GPU to its boost clock
  // (it idles far below) before any candidate is timed. The first GPU's is the size's baseline.
  TimingPolicy baselinePolicy = context_.options.timing;
  baselinePolicy.bestSoFarMs = 0;
  baselinePolicy.warmupMs = 300;
  baselinePolicy.budgetMs = 300;
  lanes_.onLanes([&](Lane& lane) {
    auto t0 = EngineClock::now();
    lane.worker->setProblem(Problem::of(shape));
    // Verified too where cuBLAS is a candidate: its row must be as trustworthy as a kernel's.
    CandidateResult cub = lane.worker->cublas(baselinePolicy, deadlineSecFor(shape, baselinePolicy),
                                              context_.options.cublasRows);
    std::lock_guard lock(context_.mutex);
    context_.gpuBusySec += secondsSince(t0);
    run.baselines[&lane] = cub;
  });
  const CandidateResult& cub = run.baselines[&lanes_.first()];
  if (cub.status == kStatusWrongResult) {
    spdlog::warn("cuBLAS at {} failed verification: {}", shape.str(), cub.detail);
  } else if (cub.status == kStatusOk) {
    run.out.cublasMs = cub.medianMs;
  } else {
    spdlog::warn("cuBLAS baseline at {} failed: {} {}", shape.str(), cub.status, cub.detail);
  }
  // Not at a basis shape (retimedPerFamily set): its share of the run goes to the families, whose
  // figures there predict other shapes; a cuBLASLt row serves its exact problem only.
  if (context_.options.cublasRows && run.out.cublasMs && run.retimedPerFamily == 0) searchCublasLt(run);
}

void SizeRuns::searchCublasLt(SizeRun& run) {
  const GemmShape& shape = run.out.shape;
  const Lane* first = &lanes_.first();
  // The key this size's configuration row would have (this GPU, driver, build, cuBLAS), but for
  // its instance, which names the configuration ("any" stands in for it).
  const CandidateResult none;
  const db::CacheKey like = rows_.cublasRow(shape, none, 0, first->worker->info().cublasVersion, "any").key;
  if (const db::StoredResult* stored = rows_.storedCublasLtRow(like)) {
    run.out.cublasLtAlgo = std::string(db::cublasLtAlgoOf(stored->instance(), shape.layout.text()));
    run.storedCublasLt = *stored;
    return;
  }
  TimingPolicy policy = context_.options.timing;
  policy.bestSoFarMs = 0;
  const double deadlineSec =
      CublasLtPick::kScreenMs / 1000 * 4 + (CublasLtPick::kFinalists + 1) * deadlineSecFor(shape, policy);
  lanes_.onLanes([&](Lane& lane) {
    if (&lane != first) return;
    auto t0 = EngineClock::now();
    CublasLtPick pick = lane.worker->cublasLt(policy, deadlineSec);
    const double searchSec = secondsSince(t0);
    std::lock_guard lock(context_.mutex);
    context_.gpuBusySec += searchSec;
    spdlog::debug("cuBLASLt at {}: {} listed, {} screened in {:.2f} s, {} ({} {})", shape.str(), pick.listed,
                  pick.screened, searchSec, pick.algo.empty() ? "none kept" : pick.algo, pick.result.medianMs,
                  pick.result.detail);
    // Recorded whether or not it beat cuBLAS's own call (the lookup serves the fastest row): a
    // later run finds it stored and searches no more.
    if (!pick.algo.empty()) {
      run.out.cublasLtAlgo = pick.algo;
      run.cublasLt = std::move(pick);
      run.cublasLtLane = &lane;
    }
  });
}

SizeOutcome SizeRuns::finish(SizeRun& run, bool retime) {
  FinalistRetimer::RowsPerRun retimed;
  if (retime && !context_.stopped()) retimed = finalists_.retime(run);
  if (context_.options.cublasRows) addCublasRow(run, retimed);
  if (context_.options.cublasRows) addCublasLtRow(run, retimed);
  // The re-timed rows, cuBLAS's with them, in one write per GPU's run (so one in all on one GPU).
  // Written one by one, a kill between two left the size half re-timed, and a resumed run takes
  // a family with any re-timed row as re-timed (FinalistRetimer::retimedByAnEarlierRun): it
  // compared the rest by their first timing, and stored cuBLAS's row from its own baseline, not
  // from the rounds. (Across several GPUs a kill between their writes still can: a write names
  // one run.)
  for (const auto& [runId, rows] : retimed) rows_.record(rows, runId);
  recordBaselines(run);
  for (auto& fo : run.out.families) declareBest(fo, run.out, run.timed);
  return run.out;
}

void SizeRuns::recordBaselines(SizeRun& run) {
  const GemmShape& shape = run.out.shape;
  for (auto& [lane, result] : run.baselines) {
    if (lane->lost || result.status != kStatusOk) continue;
    db::BaselineRecord b;
    b.problem = db::problemKeyOf(shape);
    b.medianMs = lane == &lanes_.first() && run.out.cublasMs ? *run.out.cublasMs : result.medianMs;  // re-timed with the finalists
    b.libraryVersion = std::to_string(lane->worker->info().cublasVersion);
    context_.store.recordBaseline(lane->runId, b);
  }
}

void SizeRuns::addCublasRow(SizeRun& run, FinalistRetimer::RowsPerRun& rows) {
  // One row per GPU model, as for any candidate (the lanes' GPUs share its key): the first lane's,
  // re-timed with the finalists (as its baseline is), else another live lane's.
  const Lane* chosen = nullptr;
  for (const auto& [lane, result] : run.baselines)
    if (!lane->lost && result.status != kStatusInterrupted && (!chosen || lane == &lanes_.first())) chosen = lane;
  if (!chosen) return;
  const CandidateResult& result = run.baselines.at(chosen);
  const bool retimed = chosen == &lanes_.first() && run.out.cublasMs && result.status == kStatusOk;
  db::ResultRecord row = rows_.cublasRow(run.out.shape, result, retimed ? *run.out.cublasMs : result.medianMs,
                                         chosen->worker->info().cublasVersion);
  // A warm rerun re-times nothing: its baseline (a long warm-up, alone) must not replace the row
  // measured in interleaved rounds beside the kernels it competes with.
  // A stored failure (a transient cuBLAS error) is replaced.
  if (const db::StoredResult* stored = rows_.storedRow(row.key);
      !run.out.cublasRetimed && stored && stored->status == kStatusOk)
    return;
  rows[chosen->runId].push_back(std::move(row));
}

void SizeRuns::addCublasLtRow(SizeRun& run, FinalistRetimer::RowsPerRun& rows) {
  if (run.cublasLt && run.cublasLtLane) {
    const CublasLtPick& pick = *run.cublasLt;
    std::vector<db::ResultRecord>& into = rows[run.cublasLtLane->runId];
    into.push_back(rows_.cublasRow(run.out.shape, pick.result, run.out.cublasLtMs.value_or(pick.result.medianMs),
                                   run.cublasLtLane->worker->info().cublasVersion, pick.algo));
    for (db::ResultRecord& old : rows_.supersededCublasLtRows(into.back())) into.push_back(std::move(old));
  } else if (run.storedCublasLt && run.out.cublasLtMs) {
    // An earlier run's configuration, re-timed with this run's finalists: its row takes the
    // interleaved figure, as theirs do.
    db::ResultRecord row = *run.storedCublasLt;
    row.medianMs = *run.out.cublasLtMs;
    row.minMs = std::min(row.minMs.value_or(*row.medianMs), *row.medianMs);
    row.gflops.reset();
    row.measuredAt.clear();
    rows[lanes_.first().runId].push_back(std::move(row));
  }
}

}  // namespace gemmtune
