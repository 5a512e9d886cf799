// TuningEngine: tunes every requested family at every requested size on one GPU, or on a group of
// identical GPUs that share the work (one worker process per GPU, a "lane": each candidate is
// timed on whichever GPU is free). Candidates go from the space (filters with reasons) through
// NVRTC (in the background, ahead of the GPUs) to a worker process (verify, then time), and every
// one ends as a result row in the DB, in the run of the GPU that measured it. Finalists are
// re-timed interleaved with cuBLAS on one GPU before a winner is declared.
#pragma once

#include <atomic>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "Compiler.hpp"
#include "ProgressLine.hpp"
#include "ResultStore.hpp"
#include "ThreadPool.hpp"
#include "TuneOptions.hpp"
#include "TuneOutcome.hpp"
#include "WorkerProtocol.hpp"
#include "gemmtune/GpuSpec.hpp"

namespace gemmtune {

class WorkerClient;
class SearchStrategy;
struct Candidate;

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
  struct Timed {
    std::string instance;    // canonical name as timed
    std::string base;        // unguarded name: identity across sizes
    const Family* family = nullptr;
    double medianMs = 0;
    bool partial = false;
    db::ResultRecord record; // as stored, for re-recording after the final re-timing
    Config config;           // as timed: families need not be built in, so names are not re-parsed
  };

  // One GPU of the group: its worker process and the run its rows belong to.
  struct Lane {
    GpuSpec gpu;
    std::unique_ptr<WorkerClient> worker;
    std::int64_t runId = 0;
    int warmKeepingRuns = 0;  // cuBLAS runs that only kept the clock up while NVRTC worked
    bool lost = false;        // its worker failed its canary again and again: the others go on
    // Where its work runs when the group has several GPUs: the worker dies with the thread that
    // started it (PR_SET_PDEATHSIG), so every start and restart happens on this one.
    std::unique_ptr<ThreadPool> thread;
  };
  // Runs `work` on every live lane at once (inline for one). A lane that throws GpuUnhealthyError
  // is lost; once none is left that error is rethrown. Other errors stop all and are rethrown.
  void onLanes(const std::function<void(Lane&)>& work);
  Lane& firstLane();

  // One size's state while the families take their turns at it (see run()).
  struct SizeRun {
    SizeOutcome out;
    std::vector<Timed> timed;
    ProgressState progress;
    std::map<const Lane*, CandidateResult> baselines;  // cuBLAS when the size was first prepared
    double gpuSec = 0;                                 // against --budget
  };

  void prefetchFirstSizes(const std::vector<GemmShape>& order);
  // Makes `shape` every worker's problem: the first time, its stored rows are read (resume) and
  // cuBLAS is timed there (the baseline; its long warm-up brings the GPU to its boost clock).
  SizeRun& useSize(const GemmShape& shape);
  // After every family: finalists re-timed, baselines recorded, per-family bests.
  SizeOutcome finishSize(SizeRun& run);
  void tuneFamily(const Family& family, const GemmShape& shape, SizeOutcome& out, std::vector<Timed>& timed,
                  ProgressState& progress);
  // A family's contenders for re-timing at one size, fastest first (complete timings only).
  std::vector<Timed*> finalistsOf(const std::string& family, std::vector<Timed>& timed) const;
  // Only a family's finalists need their cubins after it is done at a size (a workload of many
  // shapes would otherwise hold every timed cubin of the run).
  void dropCubinsOfNonFinalists(const Family& family, std::vector<Timed>& timed) const;
  SearchStrategy& strategyFor(const Family& family);
  // Runs short cuBLAS timings at the current size until `compile` is ready (or the run stops).
  void keepGpuWarmUntil(const std::shared_future<CompileResult>& compile, Lane& lane);
  // A timing taken far below the GPU's boost clock (ClockRule.hpp) is taken again.
  bool clockWasLow(const CandidateResult& r, const Lane& lane) const;
  // Whether an earlier run left a final row for this candidate at this size (resume).
  bool hasStoredRow(const Candidate& c, const std::string& srcHash, const GemmShape& shape) const;
  db::ResultRecord recordFor(const Candidate& c, const std::string& srcHash, const GemmShape& shape) const;
  // Records a candidate that is not timed (rejected, or pruned with its reason): at once, or
  // into `batch` for recordBatch (one transaction for a family's thousands of such rows).
  void recordCandidate(const Candidate& c, const std::string& srcHash, const GemmShape& shape, FamilyOutcome& fo,
                       ProgressState& progress, std::vector<db::ResultRecord>* batch = nullptr);
  void recordBatch(std::vector<db::ResultRecord>& batch);
  // Verifies and times one accepted candidate on `lane` (or resumes its stored row); its median
  // when ok. Called with `lock` (mutex_) held; released while the GPU works.
  std::optional<double> timeCandidate(const Candidate& c, const std::string& srcHash, const GemmShape& shape,
                                      bool classic, double bestMs, SizeOutcome& out, FamilyOutcome& fo,
                                      std::vector<Timed>& timed, ProgressState& progress, Lane& lane,
                                      std::unique_lock<std::mutex>& lock);
  void retimeFinalists(const GemmShape& shape, std::vector<Timed>& timed, SizeOutcome& out);
  db::CacheKey keyFor(const Config& config, const std::string& sourceHash, const GemmShape& shape) const;
  const std::string& sourceHashOf(const Family& family);
  bool overBudget() const;
  // One transaction for `recs` (one row or a batch); store failures become IoError.
  void record(std::span<const db::ResultRecord> recs, std::int64_t runId);
  void record(const db::ResultRecord& rec, std::int64_t runId) { record(std::span(&rec, 1), runId); }

  GpuSpec gpu_;  // the group's first GPU: limits, fingerprint and arch are the same for all
  std::vector<Lane> lanes_;
  std::mutex mutex_;  // what the lanes share while a family is tuned: store, strategy, outcomes
  Compiler& compiler_;
  db::ResultStore& store_;
  TuneOptions options_;
  ProgressLine& progress_;
  const std::atomic<bool>& stop_;
  std::int64_t gpuId_ = 0;
  int driverVersion_ = 0;
  std::map<const Family*, std::string> sourceHashes_;
  // One search strategy per family for the whole run: it learns from every size it has seen.
  std::map<const Family*, std::unique_ptr<SearchStrategy>> strategies_;
  std::unordered_map<std::string, db::StoredResult> stored_;  // cache key hash -> final row, every size used
  std::unordered_map<std::string, std::string> storedRankPruned_;  // cache key hash -> reason, rows stored pruned:rank
  std::map<std::string, SizeRun> sizeRuns_;                  // by GemmShape::str()
  SizeRun* current_ = nullptr;                               // the workers' problem now
  double gpuBusySec_ = 0;
  bool interrupted_ = false;
};

}  // namespace gemmtune
