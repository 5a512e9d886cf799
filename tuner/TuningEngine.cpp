#include "TuningEngine.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <future>
#include <set>
#include <thread>

#include "CandidateFilter.hpp"
#include "CandidateSpace.hpp"
#include "ClockRule.hpp"
#include "CudaDriver.hpp"
#include "FamilyRegistry.hpp"
#include "CandidateRequests.hpp"
#include "NvrtcCompiler.hpp"
#include "PresentBuild.hpp"
#include "Sha256.hpp"
#include "WorkerClient.hpp"
#include "search/SearchStrategy.hpp"
#include "worker/TimingStats.hpp"
#include "Errors.hpp"

namespace gemmtune {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string baseName(const Config& c) {
  Config u = c;
  u.guarded = false;
  return u.name();
}

std::optional<Config> classicConfig(const Family& f, const GemmShape& s) {
  auto c = FamilyRegistry::classic(f);
  if (c) c = formFor(*c, GemmProblem::packed(s.M, s.N, s.K));
  return c;
}

double tflops(const GemmShape& s, double ms) { return ms > 0 ? s.flops() / (ms * 1e-3) / 1e12 : 0; }

// Status family used for the counts in the final table: "rejected:smem" -> "rejected".
std::string statusClass(const std::string& status) { return status.substr(0, status.find(':')); }

}  // namespace

TuningEngine::TuningEngine(GpuSpec gpu, Compiler& compiler, db::ResultStore& store, const TuneOptions& options,
                           ProgressLine& progress, const std::atomic<bool>& stop)
    : TuningEngine(std::vector<GpuSpec>{std::move(gpu)}, compiler, store, options, progress, stop) {}

TuningEngine::TuningEngine(std::vector<GpuSpec> gpus, Compiler& compiler, db::ResultStore& store,
                           const TuneOptions& options, ProgressLine& progress, const std::atomic<bool>& stop)
    : compiler_(compiler), store_(store), options_(options), progress_(progress), stop_(stop) {
  if (gpus.empty()) throw Error("TuningEngine needs at least one GPU");
  gpu_ = gpus.front();
  for (auto& g : gpus) {
    if (db::gpuFingerprint(g) != db::gpuFingerprint(gpu_))
      throw Error(fmt::format("GPUs {} and {} differ ({} / {}): tune them separately", gpu_.deviceIndex, g.deviceIndex,
                              gpu_.name, g.name));
    Lane lane;
    lane.gpu = std::move(g);
    lanes_.push_back(std::move(lane));
  }
}

TuningEngine::~TuningEngine() = default;

const std::string& TuningEngine::sourceHashOf(const Family& family) {
  auto it = sourceHashes_.find(&family);
  if (it == sourceHashes_.end()) it = sourceHashes_.emplace(&family, compiler_.sourceHash(family)).first;
  return it->second;
}

db::CacheKey TuningEngine::keyFor(const Config& config, const std::string& sourceHash, const GemmShape& s) const {
  db::CacheKey k;
  k.gpuFingerprint = db::gpuFingerprint(gpu_);
  k.driverVersion = driverVersion_;
  k.nvrtcVersion = NvrtcCompiler::version();
  k.arch = gpu_.arch();
  k.compileOptions = compileOptionsOf(*config.family);
  k.sourceHash = sourceHash;
  k.instance = config.name();
  k.problem = db::ProblemKey{s.M, s.N, s.K, "nn", "any"};
  return k;
}

bool TuningEngine::overBudget() const {
  return options_.budgetSec > 0 && current_ && current_->gpuSec > options_.budgetSec;
}

void TuningEngine::record(std::span<const db::ResultRecord> recs, std::int64_t runId) {
  try {
    store_.recordResults(runId, recs);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    const std::string what = recs.size() == 1 ? recs.front().instance() : fmt::format("{} candidates", recs.size());
    throw IoError(fmt::format("cannot record {} in the results database: {}", what, e.what()));
  }
}

GpuOutcome TuningEngine::run() {
  auto start = Clock::now();
  GpuOutcome outcome;
  outcome.gpuName = gpu_.name;
  driverVersion_ = options_.simulated ? options_.simulated->driverVersion : CudaDriver::get().version();
  gpuId_ = store_.recordGpu(gpu_);
  for (Lane& lane : lanes_) {  // one run per GPU: a row names the GPU that measured it
    db::RunInfo info;
    info.gpu = lane.gpu;
    info.driverVersion = driverVersion_;
    info.nvrtcVersion = NvrtcCompiler::version();
    info.commandLine = options_.commandLine;
    lane.runId = store_.beginRun(info);
  }
  onLanes([&](Lane& lane) {
    if (options_.simulated) {
      std::vector<std::string> argv = options_.simulated->workerArgv;
      for (auto& arg : argv)  // "{device}": which simulated GPU this worker plays
        for (size_t at; (at = arg.find("{device}")) != std::string::npos;)
          arg.replace(at, 8, std::to_string(lane.gpu.deviceIndex));
      lane.worker = std::make_unique<WorkerClient>(argv);
    } else {
      lane.worker = std::make_unique<WorkerClient>(lane.gpu.deviceIndex, options_.selfExe);
    }
    spdlog::debug("worker on GPU {} ({}) ready", lane.gpu.deviceIndex, lane.worker->info().name);
  });

  // Family by family, each at every size, smallest first (a family's search learns from its
  // smaller sizes). Families go one after another rather than sizes: the first size of a
  // slow-compiling family (CUTLASS: seconds per instance) compiles in the background while the
  // GPU times the earlier families at every size, instead of the GPU waiting for NVRTC at the
  // first size while the larger ones wait for their turn.
  std::vector<GemmShape> order = options_.sizes;
  std::stable_sort(order.begin(), order.end(), [](const GemmShape& a, const GemmShape& b) { return a.flops() < b.flops(); });
  prefetchFirstSizes(order);
  for (const Family* f : options_.families) {
    for (const auto& s : order) {
      if (stop_ || interrupted_) break;
      if (!options_.selected(s, f)) continue;  // another shard's unit: no baseline, no run row for it
      SizeRun& run = useSize(s);
      tuneFamily(*f, s, run.out, run.timed, run.progress);
      dropCubinsOfNonFinalists(*f, run.timed);
    }
  }
  progress_.clear();
  std::map<std::string, SizeOutcome> bySize;
  for (const auto& s : order) {
    auto it = sizeRuns_.find(s.str());
    if (it == sizeRuns_.end()) continue;
    if (!stop_ && !interrupted_) useSize(s);  // the finalists are re-timed there
    bySize[s.str()] = finishSize(it->second);
  }
  for (const auto& s : options_.sizes)
    if (auto it = bySize.find(s.str()); it != bySize.end()) outcome.sizes.push_back(it->second);

  outcome.interrupted = interrupted_ || stop_;
  for (Lane& lane : lanes_) {
    store_.endRun(lane.runId);
    outcome.deviceIndices.push_back(lane.gpu.deviceIndex);
    if (lane.lost) outcome.lostDevices.push_back(lane.gpu.deviceIndex);
    outcome.warmKeepingRuns += lane.warmKeepingRuns;
    if (lane.worker) outcome.workerRestarts += lane.worker->restarts();
    lane.worker.reset();
  }
  outcome.gpuBusySeconds = gpuBusySec_;
  outcome.wallSeconds = secondsSince(start);
  return outcome;
}

TuningEngine::Lane& TuningEngine::firstLane() {
  for (Lane& lane : lanes_)
    if (!lane.lost) return lane;
  throw GpuUnhealthyError("every GPU of the group was lost");  // onLanes rethrows before this
}

void TuningEngine::onLanes(const std::function<void(Lane&)>& work) {
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

void TuningEngine::prefetchFirstSizes(const std::vector<GemmShape>& order) {
  // Every family's first size queues its compiles now, in family order, so that a slow family
  // (a CUTLASS instance takes seconds to compile) compiles while the earlier ones are timed;
  // tuneFamily's submits join these compiles (Compiler dedupes in-flight work) or, once done,
  // read them from the disk cache — without one, a finished prefetch would be compiled twice.
  if (compiler_.cache().dir().empty()) return;
  for (const Family* f : options_.families) {
    auto first = std::find_if(order.begin(), order.end(), [&](const GemmShape& s) { return options_.selected(s, f); });
    if (first == order.end()) continue;
    SpaceOptions so;
    so.size = *first;
    so.filter = options_.filter;
    std::vector<Config> configs;
    for (const Candidate& c : screenSpace(*f, gpu_, so))
      if (c.accepted()) configs.push_back(c.config);
    compiler_.prefetch(configs, gpu_.arch());
  }
}

TuningEngine::SizeRun& TuningEngine::useSize(const GemmShape& shape) {
  auto [it, first] = sizeRuns_.try_emplace(shape.str());
  SizeRun& run = it->second;
  if (current_ == &run) return run;
  current_ = &run;
  if (!first) {
    onLanes([&](Lane& lane) {
      auto t0 = Clock::now();  // the worker prepares it again: random data, cuBLAS references
      lane.worker->setProblem(Problem{shape.M, shape.N, shape.K, 0.0});
      std::lock_guard lock(mutex_);
      gpuBusySec_ += secondsSince(t0);
    });
    return run;
  }
  run.out.shape = shape;
  run.progress.gpu = gpu_.name;
  run.progress.size = shape.str();
  if (options_.resume) {
    db::ResultFilter f;
    f.gpuId = gpuId_;
    f.m = shape.M;
    f.n = shape.N;
    f.k = shape.K;
    for (auto& r : store_.results(f)) {
      if (r.fullStatus() == "pruned:rank") storedRankPruned_.emplace(r.cacheKeyHash, r.errorText);
      if (db::isFinalStatus(r.status)) stored_.emplace(r.cacheKeyHash, std::move(r));
    }
  }

  // cuBLAS goes first at every size, with a long warm-up: it brings each GPU to its boost clock
  // (it idles far below) before any candidate is timed. The first GPU's is the size's baseline.
  TimingPolicy baselinePolicy = options_.timing;
  baselinePolicy.bestSoFarMs = 0;
  baselinePolicy.warmupMs = 300;
  baselinePolicy.budgetMs = 300;
  onLanes([&](Lane& lane) {
    auto t0 = Clock::now();
    lane.worker->setProblem(Problem{shape.M, shape.N, shape.K, 0.0});
    CandidateResult cub = lane.worker->cublas(baselinePolicy, deadlineSecFor(shape, baselinePolicy));
    std::lock_guard lock(mutex_);
    gpuBusySec_ += secondsSince(t0);
    run.baselines[&lane] = cub;
  });
  const CandidateResult& cub = run.baselines[&firstLane()];
  if (cub.status == kStatusOk) {
    run.out.cublasMs = cub.medianMs;
  } else {
    spdlog::warn("cuBLAS baseline at {} failed: {} {}", shape.str(), cub.status, cub.detail);
  }
  return run;
}

std::vector<TuningEngine::Timed*> TuningEngine::finalistsOf(const std::string& family, std::vector<Timed>& timed) const {
  std::vector<Timed*> mine;
  for (auto& t : timed)
    if (t.family->name == family && !t.partial) mine.push_back(&t);
  std::stable_sort(mine.begin(), mine.end(), [](const Timed* a, const Timed* b) { return a->medianMs < b->medianMs; });
  // The best `finalists`, and beyond them whoever came within kFinalistWindow of the best: one
  // short timing each cannot order those (on the H100 two 1024 configurations 3.4 % apart head to
  // head swapped places between two runs that timed the same 445), up to twice as many.
  constexpr double kFinalistWindow = 0.04;
  const size_t least = static_cast<size_t>(std::max(0, options_.finalists));
  size_t n = std::min(mine.size(), least);
  while (n < mine.size() && n < 2 * least && mine[n]->medianMs <= mine.front()->medianMs * (1 + kFinalistWindow)) ++n;
  mine.resize(n);
  return mine;
}

void TuningEngine::dropCubinsOfNonFinalists(const Family& family, std::vector<Timed>& timed) const {
  const std::vector<Timed*> keep = finalistsOf(family.name, timed);
  for (auto& t : timed)
    if (t.family == &family && std::find(keep.begin(), keep.end(), &t) == keep.end()) {
      t.record.cubin.clear();
      t.record.cubin.shrink_to_fit();
    }
}

SizeOutcome TuningEngine::finishSize(SizeRun& run) {
  const GemmShape& shape = run.out.shape;
  SizeOutcome& out = run.out;
  std::vector<Timed>& timed = run.timed;
  if (!stop_ && !interrupted_) retimeFinalists(shape, timed, out);

  for (auto& [lane, result] : run.baselines) {
    if (lane->lost || result.status != kStatusOk) continue;
    db::BaselineRecord b;
    b.problem = db::ProblemKey{shape.M, shape.N, shape.K, "nn", "any"};
    b.medianMs = lane == &firstLane() && out.cublasMs ? *out.cublasMs : result.medianMs;  // re-timed with the finalists
    b.libraryVersion = std::to_string(lane->worker->info().cublasVersion);
    store_.recordBaseline(lane->runId, b);
  }

  // Per-family best.
  for (auto& fo : out.families) {
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
  return out;
}

SearchStrategy& TuningEngine::strategyFor(const Family& family) {
  auto it = strategies_.find(&family);
  if (it == strategies_.end()) {
    StrategyOptions so;
    so.carry = options_.carry;
    it = strategies_.emplace(&family, makeStrategy(options_.strategy, so)).first;
  }
  return *it->second;
}

void TuningEngine::tuneFamily(const Family& family, const GemmShape& shape, SizeOutcome& out,
                              std::vector<Timed>& timed, ProgressState& progress) {
  FamilyOutcome fo;
  fo.family = family.name;
  const std::optional<Config> classic = classicConfig(family, shape);
  if (classic) fo.classicInstance = classic->name();
  auto isClassic = [&](const Config& c) { return classic && c == *classic; };

  SpaceOptions so;
  so.size = shape;
  so.filter = options_.filter;
  std::vector<Candidate> cands = screenSpace(family, gpu_, so);
  std::vector<std::string> srcHashes(cands.size(), sourceHashOf(family));
  progress.total += static_cast<int>(cands.size());

  // Rejected before compiling: recorded whatever the strategy does, in one transaction (a row
  // each in its own was most of a simulated 50-shape workload's wall time: 3 000 rows a shape for
  // thin). The rest are the strategy's points.
  std::vector<size_t> indexOf;
  std::vector<SearchPoint> points;
  std::vector<db::ResultRecord> batch;
  for (size_t i = 0; i < cands.size(); ++i) {
    const Candidate& c = cands[i];
    if (!c.accepted()) {
      recordCandidate(c, srcHashes[i], shape, fo, progress, &batch);
      continue;
    }
    SearchPoint p;
    p.base = baseName(c.config);
    p.classic = isClassic(c.config);
    if (c.grid) p.blocks = static_cast<long long>(c.grid->x) * c.grid->y * c.grid->z;
    p.warpsPerBlock = (c.threadsPerBlock + 31) / 32;
    indexOf.push_back(i);
    points.push_back(std::move(p));
  }
  recordBatch(batch);
  SearchStrategy& strategy = strategyFor(family);
  strategy.start(SearchContext{shape, gpu_.smCount}, std::move(points));
  // An earlier run of this strategy that timed at least --carry of this family here and ranked
  // the rest out: its choices stand (the rows keep their reasons). The ranking is made from the
  // sizes below, whose finalists that run re-timed after ranking; ranked again from the re-timed
  // figures, near-equals at the cut swap places and the same command would time a few more each
  // time (6 at 8192 of a warm 1024..8192 tune, measured on an H100). Asked for a --carry above
  // what was timed, exhaustively or by another strategy, the rest are ranked afresh.
  int storedOk = 0;
  for (size_t i : indexOf)
    if (auto it = stored_.find(keyFor(cands[i].config, srcHashes[i], shape).hash()); it != stored_.end())
      storedOk += it->second.status == kStatusOk;
  const bool keepRankPruning = options_.resume && options_.carry > 0 && storedOk >= options_.carry;
  // The stored reason of a point whose pruning stands, or null.
  auto rankPrunedBefore = [&](size_t point) -> const std::string* {
    const size_t i = indexOf[point];
    if (!keepRankPruning || isClassic(cands[i].config) || hasStoredRow(cands[i], srcHashes[i], shape)) return nullptr;
    auto it = storedRankPruned_.find(keyFor(cands[i].config, srcHashes[i], shape).hash());
    return it != storedRankPruned_.end() && strategy.wroteNotTimedReason(it->second) ? &it->second : nullptr;
  };

  // Compiles run ahead of the GPU along the strategy's plan, a window of twice the compile jobs,
  // so the GPU waits for NVRTC only where NVRTC is slower than timing, and what the strategy
  // never proposes is never compiled. An interrupted run drops the queue (cancelPending).
  std::vector<std::shared_future<CompileResult>> compiles(cands.size());
  const std::vector<size_t>& plan = strategy.plan();
  const size_t window = static_cast<size_t>(std::max(8, 2 * compiler_.jobs()));
  size_t submitted = 0;
  auto compileAhead = [&](size_t proposed) {
    for (; submitted < plan.size() && submitted < proposed + window; ++submitted) {
      const size_t i = indexOf[plan[submitted]];
      if (rankPrunedBefore(plan[submitted])) continue;  // never proposed to the GPU: nothing to compile
      if (!compiles[i].valid()) compiles[i] = compiler_.submit(cands[i].config, gpu_.arch());
    }
  };
  std::vector<bool> handled(indexOf.size(), false);
  double bestMs = 0;
  bool classicDone = std::none_of(indexOf.begin(), indexOf.end(), [&](size_t i) { return isClassic(cands[i].config); });
  auto sizeStart = Clock::now();
  const int timedBefore = out.timed;
  int proposed = 0, inFlight = 0;
  std::deque<size_t> requeued;      // proposals a lost GPU left unmeasured
  std::condition_variable settled;  // a proposal in flight was told (or given back)
  // Each GPU of the group runs this loop; they share the strategy and everything else under
  // mutex_, which is released only while a compile or the GPU works.
  auto laneLoop = [&](Lane& lane) {
    std::unique_lock lock(mutex_);
    for (;;) {
      // Once the budget is spent (the classic configuration is still timed), the rest is pruned:budget.
      if (overBudget() && classicDone) break;
      if (stop_ || interrupted_) {
        interrupted_ = true;
        compiler_.cancelPending();
        break;
      }
      std::optional<size_t> proposal;
      if (!requeued.empty()) {
        proposal = requeued.front();
        requeued.pop_front();
      } else {
        proposal = strategy.next();
      }
      if (!proposal) {
        if (inFlight == 0) break;
        settled.wait(lock);  // the strategy may want more once the results in flight are told
        continue;
      }
      if (handled.at(*proposal)) continue;  // a strategy proposes each point once; never time one twice
      if (rankPrunedBefore(*proposal)) continue;  // not timed, not told: recorded pruned again below
      handled[*proposal] = true;
      ++inFlight;
      compileAhead(static_cast<size_t>(++proposed));
      const size_t i = indexOf[*proposal];
      Candidate& c = cands[i];
      try {
        if (!compiles[i].valid()) compiles[i] = compiler_.submit(c.config, gpu_.arch());
        std::shared_future<CompileResult> compile = compiles[i];
        lock.unlock();
        keepGpuWarmUntil(compile, lane);
        std::shared_ptr<const CompileResult> compiled;
        try {
          compiled = std::make_shared<const CompileResult>(compile.get());
        } catch (const std::future_error&) {
          // Dropped by another lane's cancelPending: the run is stopping; a resumed run measures it.
          lock.lock();
          interrupted_ = true;
          --inFlight;
          settled.notify_all();
          break;
        }
        lock.lock();
        compiles[i] = {};
        srcHashes[i] = compiled->sourceHash;
        checkAfterCompile(c, gpu_, compiled, shape, options_.filter);
        const bool yardstick = isClassic(c.config);
        Measurement m;
        if (c.occupancy) m.blocksPerSm = c.occupancy->blocksPerSm;
        if (c.accepted() || (c.stage == CandidateStage::Pruned && hasStoredRow(c, srcHashes[i], shape))) {
          const size_t timedCount = timed.size();
          m.medianMs = timeCandidate(c, srcHashes[i], shape, yardstick, bestMs, out, fo, timed, progress, lane, lock);
          if (interrupted_) {
            --inFlight;
            settled.notify_all();
            break;
          }
          const bool complete = timed.size() > timedCount && !timed.back().partial;
          if (m.medianMs && complete && (bestMs == 0 || *m.medianMs < bestMs)) bestMs = *m.medianMs;
        } else {
          recordCandidate(c, srcHashes[i], shape, fo, progress);
        }
        classicDone = classicDone || yardstick;
        strategy.tell(*proposal, m);
        --inFlight;
        settled.notify_all();
        const int measured = out.timed - timedBefore;
        if (measured > 0) progress.etaSeconds = secondsSince(sizeStart) / measured * strategy.expectedRemaining();
        progress_.update(progress);
      } catch (const GpuUnhealthyError&) {
        // This GPU is gone (onLanes drops it): another one measures the candidate.
        if (!lock.owns_lock()) lock.lock();
        handled[*proposal] = false;
        requeued.push_back(*proposal);
        --inFlight;
        settled.notify_all();
        throw;
      } catch (...) {
        if (!lock.owns_lock()) lock.lock();
        interrupted_ = true;  // an error ends every lane's loop; onLanes rethrows it
        --inFlight;
        settled.notify_all();
        throw;
      }
    }
  };
  onLanes(laneLoop);
  // What the strategy did not propose is recorded with its reason (unless the run was stopped:
  // a resumed run times it then). A stored final row outranks pruning: pruning is relative to
  // one run's ranking and budget, so a resumed run may prune what the interrupted one measured,
  // and must not overwrite it.
  if (interrupted_ || stop_) {
    out.families.push_back(std::move(fo));
    return;
  }
  std::unique_lock lock(mutex_);  // uncontended: the lanes are done
  for (size_t r = 0; r < indexOf.size(); ++r) {
    if (handled[r]) continue;
    Candidate& c = cands[indexOf[r]];
    const std::string& srcHash = srcHashes[indexOf[r]];
    if (hasStoredRow(c, srcHash, shape)) {
      Measurement m;
      m.medianMs = timeCandidate(c, srcHash, shape, false, 0, out, fo, timed, progress, firstLane(), lock);  // resumes
      strategy.tell(r, m);
      continue;
    }
    c.stage = CandidateStage::Pruned;
    if (const std::string* kept = rankPrunedBefore(r)) {
      c.limit = "rank";
      c.reason = *kept;
    } else if (overBudget()) {
      c.limit = "budget";
      c.reason = fmt::format("--budget {} s spent at this size", options_.budgetSec);
    } else {
      c.limit = "rank";
      c.reason = strategy.notTimedReason(r);
    }
    recordCandidate(c, srcHash, shape, fo, progress, &batch);
  }
  recordBatch(batch);
  out.families.push_back(std::move(fo));
}

void TuningEngine::keepGpuWarmUntil(const std::shared_future<CompileResult>& compile, Lane& lane) {
  // Left idle, the GPU drops to a few hundred MHz within milliseconds and the next candidate
  // would be timed on the way back up: short cuBLAS runs at this size hold the clock meanwhile.
  TimingPolicy warm = options_.timing;
  warm.warmupMs = 0;
  warm.budgetMs = 20;
  warm.minReps = 1;
  warm.bestSoFarMs = 0;
  while (!stop_ && compile.wait_for(std::chrono::milliseconds(10)) == std::future_status::timeout) {
    lane.worker->cublas(warm, deadlineSecFor(current_->out.shape, warm));
    ++lane.warmKeepingRuns;
  }
}

bool TuningEngine::clockWasLow(const CandidateResult& r, const Lane& lane) const {
  return belowSustainedClock(r.smClockMHz, lane.worker->info().maxClockMHz);
}

bool TuningEngine::hasStoredRow(const Candidate& c, const std::string& srcHash, const GemmShape& shape) const {
  return !stored_.empty() && stored_.count(keyFor(c.config, srcHash, shape).hash()) > 0;
}

db::ResultRecord TuningEngine::recordFor(const Candidate& c, const std::string& srcHash, const GemmShape& shape) const {
  db::ResultRecord rec;
  rec.key = keyFor(c.config, srcHash, shape);
  rec.setConfig(c.config.family->name, c.config.name(), c.config.namedValues());
  rec.threadsPerBlock = c.threadsPerBlock;
  rec.dynamicSmemBytes = c.dynamicSmemBytes;
  rec.staticSmemBytes = c.staticSmemBytes;
  if (c.compiled && c.compiled->ok) {
    const auto& res = c.compiled->resources;
    rec.registers = res.registers;
    rec.stackFrameBytes = res.stackFrameBytes;
    rec.spillStoreBytes = res.spillStoreBytes;
    rec.spillLoadBytes = res.spillLoadBytes;
    rec.loweredName = joinLoweredNames(c.compiled->loweredNames);
  }
  if (c.occupancy) {
    rec.occupancy = c.occupancy->fraction;
    rec.limiter = c.occupancy->limiterNames();
  }
  return rec;
}

void TuningEngine::recordCandidate(const Candidate& c, const std::string& srcHash, const GemmShape& shape,
                                   FamilyOutcome& fo, ProgressState& progress, std::vector<db::ResultRecord>* batch) {
  db::ResultRecord rec = recordFor(c, srcHash, shape);
  const std::string status = c.status();
  ++progress.done;
  if (c.stage == CandidateStage::Pruned) ++progress.pruned;
  else ++progress.rejected;
  fo.statusCounts[statusClass(status)]++;
  auto storedIt = stored_.find(rec.key.hash());
  if (storedIt != stored_.end() && storedIt->second.fullStatus() == status) return;  // recorded so already
  rec.setStatus(status);
  rec.errorText = c.stage == CandidateStage::Compile && c.compiled ? c.compiled->log : c.reason;
  if (batch)
    batch->push_back(std::move(rec));
  else
    record(rec, firstLane().runId);  // measured on no GPU: the group's first run holds it
}

void TuningEngine::recordBatch(std::vector<db::ResultRecord>& batch) {
  if (batch.empty()) return;
  record(batch, firstLane().runId);  // measured on no GPU: the group's first run holds them
  batch.clear();
}

std::optional<double> TuningEngine::timeCandidate(const Candidate& c, const std::string& srcHash, const GemmShape& shape,
                                                  bool classic, double bestMs, SizeOutcome& out, FamilyOutcome& fo,
                                                  std::vector<Timed>& timed, ProgressState& progress, Lane& lane,
                                                  std::unique_lock<std::mutex>& lock) {
  const Family& family = *c.config.family;
  db::ResultRecord rec = recordFor(c, srcHash, shape);
  ++progress.done;
  auto storedIt = stored_.find(rec.key.hash());
  if (storedIt != stored_.end()) {
    // Resumed: measured by an earlier, interrupted run with the same cache key.
    const db::StoredResult& stored = storedIt->second;
    const std::string status = stored.fullStatus();
    ++out.resumed;
    fo.statusCounts[statusClass(status)]++;
    if (stored.status == kStatusOk && stored.medianMs) {
      timed.push_back(Timed{c.config.name(), baseName(c.config), &family, *stored.medianMs, stored.partial, stored, c.config});
      return *stored.medianMs;
    }
    if (statusClass(status) == "rejected") ++progress.rejected;
    else if (status != kStatusOk) ++progress.failed;
    return std::nullopt;
  }

  CandidateRequest req = requestFor(c.config, *c.compiled, shape, options_.timing);
  req.timing.bestSoFarMs = classic ? 0 : bestMs;  // the yardstick is never cut short
  lock.unlock();  // the other GPUs go on meanwhile
  auto t0 = Clock::now();
  CandidateResult r = lane.worker->run(req, deadlineSecFor(shape, req.timing));
  if (r.status == kStatusWorkerDied) {
    // A worker killed from outside (the OOM killer, a kill -9) says nothing about the kernel: it
    // runs once more on the fresh worker, and only a second death is recorded as the kernel's.
    spdlog::warn("{} at {}: {} on GPU {}; measuring it again", c.config.name(), shape.str(), r.detail,
                 lane.gpu.deviceIndex);
    CandidateResult again = lane.worker->run(req, deadlineSecFor(shape, req.timing));
    if (again.status == kStatusWorkerDied) again.detail = fmt::format("twice: {}; then {}", r.detail, again.detail);
    r = again;
  }
  if (r.status == kStatusOk && clockWasLow(r, lane)) {
    // Timed while the GPU was far below its boost clock (it idles at a few hundred MHz while
    // NVRTC works): timed again, verified already; the row keeps the clock it was timed at.
    spdlog::debug("{} at {}: timed at {} MHz, below {} % of {} MHz: timing again", c.config.name(), shape.str(),
                  r.smClockMHz, kLowClockPercent, lane.worker->info().maxClockMHz);
    CandidateRequest again = req;
    again.verify = false;
    CandidateResult second = lane.worker->run(again, deadlineSecFor(shape, again.timing));
    if (second.status == kStatusOk) second.maxError = r.maxError;  // from the verification of the first
    if (second.status == kStatusOk || second.status == kStatusInterrupted) r = second;
  }
  lock.lock();
  double busy = secondsSince(t0);
  gpuBusySec_ += busy;
  current_->gpuSec += busy;
  if (r.status == kStatusInterrupted) {
    --progress.done;
    interrupted_ = true;
    compiler_.cancelPending();
    return std::nullopt;
  }
  ++out.timed;
  rec.setStatus(r.status);
  rec.errorText = r.detail;
  if (r.maxError != 0 && std::isfinite(r.maxError)) rec.maxError = r.maxError;
  if (r.smClockMHz) rec.smClockMHz = r.smClockMHz;
  std::optional<double> ms;
  if (r.status == kStatusOk) {
    rec.medianMs = r.medianMs;
    rec.minMs = r.minMs;
    rec.spread = r.spread;
    rec.reps = r.reps;
    rec.partial = r.partial;
    rec.cubin = c.compiled->cubin;
    timed.push_back(Timed{c.config.name(), baseName(c.config), &family, r.medianMs, r.partial, rec, c.config});
    ms = r.medianMs;
    if (progress.bestInstance.empty() || tflops(shape, r.medianMs) > progress.bestTflops) {
      progress.bestTflops = tflops(shape, r.medianMs);
      progress.bestInstance = c.config.name();
    }
  } else {
    ++progress.failed;
    spdlog::debug("{} at {}: {} {}", c.config.name(), shape.str(), r.status, r.detail);
  }
  record(rec, lane.runId);
  fo.statusCounts[statusClass(r.status)]++;
  return ms;
}

void TuningEngine::retimeFinalists(const GemmShape& shape, std::vector<Timed>& timed, SizeOutcome& out) {
  // The best few of each family, re-timed in rounds interleaved with cuBLAS so that clock and
  // thermal drift hit every contender alike. Several GPUs share the finalists (each interleaving
  // its share with its own cuBLAS); the first GPU's cuBLAS becomes the size's baseline.
  std::vector<Timed*> finalists;
  for (const auto& fo : out.families)
    for (Timed* t : finalistsOf(fo.family, timed)) finalists.push_back(t);
  if (finalists.size() < 2) return;
  // The same command again: nothing was timed at this size in this run and an earlier run
  // re-timed every family's finalists, so the stored rows hold the interleaved figures already
  // (this run's cuBLAS baseline was timed when the size began). Asking whether the best few by
  // those figures are all re-timed rows is not the same: re-timing reorders near-equals, and a
  // first-timed row would move into the window and have every finalist re-timed again, run after
  // run (a warm tune of 1024..8192 took 43 s instead of about 9, measured on an H100). A family
  // no run re-timed here (its run was stopped first), or one candidate timed anew, and they are
  // all re-timed together, so that they are compared in the same rounds.
  auto retimedBefore = [&](const FamilyOutcome& fo) {
    return std::any_of(timed.begin(), timed.end(), [&](const Timed& t) {
      return t.family->name == fo.family && t.record.statusReason == kReasonRetimed;
    });
  };
  if (out.timed == 0 && std::all_of(out.families.begin(), out.families.end(), [&](const FamilyOutcome& fo) {
        return finalistsOf(fo.family, timed).empty() || retimedBefore(fo);
      }))
    return;

  const int rounds = 5;
  TimingPolicy quick = options_.timing;
  quick.warmupMs = 5;
  quick.budgetMs = std::max(20.0, options_.timing.budgetMs / rounds);
  quick.minReps = 3;
  quick.bestSoFarMs = 0;
  std::vector<std::vector<double>> samples(finalists.size());
  std::vector<int> reps(finalists.size(), 0);
  std::vector<const Lane*> retimedOn(finalists.size(), nullptr);
  std::vector<const Lane*> live;
  for (const Lane& lane : lanes_)
    if (!lane.lost) live.push_back(&lane);
  std::vector<double> baselineSamples;
  onLanes([&](Lane& lane) {
    const size_t share = static_cast<size_t>(std::find(live.begin(), live.end(), &lane) - live.begin());
    std::vector<double> cublasSamples;
    auto t0 = Clock::now();
    for (int round = 0; round < rounds && !stop_; ++round) {
      for (size_t i = share; i < finalists.size() && !stop_; i += live.size()) {
        auto& rec = finalists[i]->record;
        const Config& cfg = finalists[i]->config;
        if (rec.cubin.empty() || rec.loweredName.empty()) {
          // Resumed rows are read without their cubin; the re-recorded row must keep one.
          CompileResult compiled = compiler_.compile(cfg, gpu_.arch());
          if (!compiled.ok) continue;  // the template changed under a resumed row: keep its first timing
          rec.cubin = compiled.cubin;
          rec.loweredName = joinLoweredNames(compiled.loweredNames);
        }
        CandidateRequest req = requestFor(cfg, compiledOf(rec), shape, quick);
        req.verify = false;  // verified when first measured at this exact size
        CandidateResult r = lane.worker->run(req, deadlineSecFor(shape, req.timing));
        if (r.status == kStatusOk) {
          samples[i].push_back(r.medianMs);
          reps[i] += r.reps;
          retimedOn[i] = &lane;
        } else if (round == 0) {
          spdlog::warn("{} at {}: re-timing failed ({} {}); its first timing stands", cfg.name(), shape.str(),
                       r.status, r.detail);
        }
      }
      if (out.cublasMs) {
        CandidateResult c = lane.worker->cublas(quick, deadlineSecFor(shape, quick));
        if (c.status == kStatusOk) cublasSamples.push_back(c.medianMs);
      }
    }
    std::lock_guard lock(mutex_);
    gpuBusySec_ += secondsSince(t0);
    if (share == 0) baselineSamples = std::move(cublasSamples);
  });
  // Stopped mid-rounds: some finalists would be stored re-timed and others not, and the resumed
  // run would take the size as re-timed. Nothing is recorded; that run re-times them all.
  if (stop_) return;
  if (!baselineSamples.empty()) out.cublasMs = summarize(baselineSamples).medianMs;
  for (size_t i = 0; i < finalists.size(); ++i) {
    if (samples[i].size() < 3 || !retimedOn[i]) continue;
    Timed& t = *finalists[i];
    // Same statistics as the worker's own timing loop, over the per-round medians.
    const TimingSummary summary = summarize(samples[i]);
    t.medianMs = summary.medianMs;
    t.record.medianMs = t.medianMs;
    t.record.minMs = std::min(summary.minMs, t.record.minMs.value_or(summary.minMs));
    t.record.spread = summary.spread;
    t.record.reps = reps[i];
    t.record.measuredAt.clear();  // now: the re-timed row replaces the first measurement
    t.record.statusReason = kReasonRetimed;
    t.record.gflops.reset();
    record(t.record, retimedOn[i]->runId);
  }
}

}  // namespace gemmtune
