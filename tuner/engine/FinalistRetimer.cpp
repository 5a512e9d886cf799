#include "engine/FinalistRetimer.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "CandidateRequests.hpp"
#include "WorkerClient.hpp"
#include "engine/EngineContext.hpp"
#include "engine/LaneGroup.hpp"
#include "worker/TimingStats.hpp"

namespace gemmtune {

namespace {

constexpr int kRounds = 5;
// A family's finalists: its best `finalists`, and beyond them whoever came within this of its best.
constexpr double kFinalistWindow = 0.04;
// Families re-timed at a size: those whose best came within this of the size's best (contenders).
constexpr double kContenderWindow = 0.10;

}  // namespace

std::vector<Timed*> FinalistRetimer::finalistsOf(const std::string& family, std::vector<Timed>& timed) const {
  std::vector<Timed*> mine;
  for (auto& t : timed)
    if (t.family->name == family && !t.partial) mine.push_back(&t);
  std::stable_sort(mine.begin(), mine.end(), [](const Timed* a, const Timed* b) { return a->medianMs < b->medianMs; });
  // The best `finalists`, and beyond them whoever came within kFinalistWindow of the best: one
  // short timing each cannot order those (on the H100 two 1024 configurations 3.4 % apart head to
  // head swapped places between two runs that timed the same 445), up to twice as many.
  const size_t least = static_cast<size_t>(std::max(0, context_.options.finalists));
  size_t n = std::min(mine.size(), least);
  while (n < mine.size() && n < 2 * least && mine[n]->medianMs <= mine.front()->medianMs * (1 + kFinalistWindow)) ++n;
  mine.resize(n);
  return mine;
}

void FinalistRetimer::dropCubinsOfNonFinalists(const Family& family, std::vector<Timed>& timed) const {
  const std::vector<Timed*> keep = finalistsOf(family.name, timed);
  for (auto& t : timed)
    if (t.family == &family && std::find(keep.begin(), keep.end(), &t) == keep.end()) {
      t.record.cubin.clear();
      t.record.cubin.shrink_to_fit();
    }
}

std::vector<Timed*> FinalistRetimer::contenders(SizeRun& size) const {
  std::vector<std::vector<Timed*>> perFamily;  // each fastest first
  double fastest = 0;
  for (const auto& fo : size.out.families) {
    std::vector<Timed*> mine = finalistsOf(fo.family, size.timed);
    if (size.retimedPerFamily > 0 && mine.size() > size.retimedPerFamily) mine.resize(size.retimedPerFamily);
    if (mine.empty()) continue;
    if (fastest == 0 || mine.front()->medianMs < fastest) fastest = mine.front()->medianMs;
    perFamily.push_back(std::move(mine));
  }
  // Only families that can still win: re-timing reorders near-equals by a few per cent, never a
  // family whose best ran kContenderWindow behind the size's best (their first timings stand).
  // With streamk, re-timing every family's finalists took 41 s of a 206 s main job on an H100.
  // The two fastest families always contend: rounds need two finalists, and cuBLAS is re-timed
  // in them (the interleaved figure the lookup's margin rests on).
  std::stable_sort(perFamily.begin(), perFamily.end(),
                   [](const auto& a, const auto& b) { return a.front()->medianMs < b.front()->medianMs; });
  std::vector<Timed*> finalists;
  for (std::size_t f = 0; f < perFamily.size(); ++f)
    if (f < 2 || perFamily[f].front()->medianMs <= fastest * (1 + kContenderWindow))
      finalists.insert(finalists.end(), perFamily[f].begin(), perFamily[f].end());
  return finalists;
}

bool FinalistRetimer::needsRounds(SizeRun& size) const {
  return contenders(size).size() >= 2 && !retimedByAnEarlierRun(size);
}

FinalistRetimer::RowsPerRun FinalistRetimer::retime(SizeRun& size) {
  if (!needsRounds(size)) return {};
  const std::vector<Timed*> finalists = contenders(size);
  const Rounds rounds = runRounds(finalists, size.out);
  // Stopped mid-rounds: some finalists would be stored re-timed and others not, and the resumed
  // run would take the size as re-timed. Nothing is recorded; that run re-times them all.
  if (context_.stop) return {};
  return retimedRows(finalists, rounds, size.out);
}

bool FinalistRetimer::retimedByAnEarlierRun(SizeRun& size) const {
  // The same command again: nothing was timed at this size in this run and an earlier run
  // re-timed every family's finalists, so the stored rows hold the interleaved figures already
  // (this run's cuBLAS baseline was timed when the size began). Asking whether the best few by
  // those figures are all re-timed rows is not the same: re-timing reorders near-equals, and a
  // first-timed row would move into the window and have every finalist re-timed again, run after
  // run (a warm tune of 1024..8192 took 43 s instead of about 9, measured on an H100). A family
  // no run re-timed here (its run was stopped first), or one candidate timed anew, and they are
  // all re-timed together, so that they are compared in the same rounds.
  // Only contenders are asked, and of those only the families within kFinalistWindow of the best:
  // on stored (re-timed) figures a family just outside kContenderWindow that the earlier run did
  // not re-time may have moved inside it, and would have every contender re-timed again.
  const std::vector<Timed>& timed = size.timed;
  auto retimedBefore = [&](const Timed* finalist) {
    return std::any_of(timed.begin(), timed.end(), [&](const Timed& t) {
      return t.family == finalist->family && t.record.statusReason == kReasonRetimed;
    });
  };
  const std::vector<Timed*> finalists = contenders(size);
  double fastest = 0;
  for (const Timed* f : finalists) fastest = fastest == 0 ? f->medianMs : std::min(fastest, f->medianMs);
  return size.out.timed == 0 && std::all_of(finalists.begin(), finalists.end(), [&](const Timed* f) {
           return f->medianMs > fastest * (1 + kFinalistWindow) || retimedBefore(f);
         });
}

FinalistRetimer::Rounds FinalistRetimer::runRounds(const std::vector<Timed*>& finalists, const SizeOutcome& out) {
  const GemmShape& shape = out.shape;
  TimingPolicy quick = context_.options.timing;
  quick.warmupMs = 5;
  quick.budgetMs = std::max(20.0, context_.options.timing.budgetMs / kRounds);
  quick.minReps = 3;
  quick.bestSoFarMs = 0;
  Rounds rounds(finalists.size());
  const std::vector<const Lane*> live = lanes_.live();
  lanes_.onLanes([&](Lane& lane) {
    const size_t share = static_cast<size_t>(std::find(live.begin(), live.end(), &lane) - live.begin());
    std::vector<double> cublasSamples, cublasLtSamples;
    auto t0 = EngineClock::now();
    for (int round = 0; round < kRounds && !context_.stop; ++round) {
      for (size_t i = share; i < finalists.size() && !context_.stop; i += live.size())
        retimeOne(i, *finalists[i], round, quick, shape, lane, rounds);
      if (out.cublasMs) {
        CandidateResult c = lane.worker->cublas(quick, deadlineSecFor(shape, quick));
        if (c.status == kStatusOk) cublasSamples.push_back(c.medianMs);
      }
      if (share == 0 && !out.cublasLtAlgo.empty()) {
        CandidateResult c = lane.worker->cublas(quick, deadlineSecFor(shape, quick), false, out.cublasLtAlgo);
        if (c.status == kStatusOk) cublasLtSamples.push_back(c.medianMs);
      }
    }
    std::lock_guard lock(context_.mutex);
    context_.gpuBusySec += secondsSince(t0);
    if (share == 0) rounds.baselineSamples = std::move(cublasSamples);
    if (share == 0) rounds.cublasLtSamples = std::move(cublasLtSamples);
  });
  return rounds;
}

void FinalistRetimer::retimeOne(size_t i, Timed& finalist, int round, const TimingPolicy& quick,
                                const GemmShape& shape, Lane& lane, Rounds& rounds) {
  auto& rec = finalist.record;
  const Config& cfg = finalist.config;
  if (rec.cubin.empty() || rec.loweredName.empty()) {
    // Resumed rows are read without their cubin; the re-recorded row must keep one.
    CompileResult compiled = context_.compiler.compile(cfg, context_.gpu.arch());
    if (!compiled.ok) return;  // the template changed under a resumed row: keep its first timing
    rec.cubin = compiled.cubin;
    rec.loweredName = joinLoweredNames(compiled.loweredNames);
  }
  CandidateRequest req = requestFor(cfg, compiledOf(rec), shape, quick);
  req.verify = false;  // verified when first measured at this exact size
  CandidateResult r = lane.worker->run(req, deadlineSecFor(shape, req.timing));
  if (r.status == kStatusOk) {
    rounds.samples[i].push_back(r.medianMs);
    rounds.reps[i] += r.reps;
    rounds.retimedOn[i] = &lane;
  } else if (round == 0) {
    spdlog::warn("{} at {}: re-timing failed ({} {}); its first timing stands", cfg.name(), shape.str(), r.status,
                 r.detail);
  }
}

FinalistRetimer::RowsPerRun FinalistRetimer::retimedRows(const std::vector<Timed*>& finalists, const Rounds& rounds,
                                                         SizeOutcome& out) {
  if (!rounds.baselineSamples.empty()) {
    out.cublasMs = summarize(rounds.baselineSamples).medianMs;
    out.cublasRetimed = true;
  }
  if (!rounds.cublasLtSamples.empty()) out.cublasLtMs = summarize(rounds.cublasLtSamples).medianMs;
  RowsPerRun rowsPerRun;
  for (size_t i = 0; i < finalists.size(); ++i) {
    if (rounds.samples[i].size() < 3 || !rounds.retimedOn[i]) continue;
    Timed& t = *finalists[i];
    // Same statistics as the worker's own timing loop, over the per-round medians.
    const TimingSummary summary = summarize(rounds.samples[i]);
    t.medianMs = summary.medianMs;
    t.record.medianMs = t.medianMs;
    t.record.minMs = std::min(summary.minMs, t.record.minMs.value_or(summary.minMs));
    t.record.spread = summary.spread;
    t.record.reps = rounds.reps[i];
    t.record.measuredAt.clear();  // now: the re-timed row replaces the first measurement
    t.record.statusReason = kReasonRetimed;
    t.record.gflops.reset();
    rowsPerRun[rounds.retimedOn[i]->runId].push_back(t.record);
  }
  return rowsPerRun;
}

}  // namespace gemmtune
