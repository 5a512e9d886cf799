// Lookup: the best measured configuration for a GPU and a problem, read from an untrusted
// database. Every candidate row is re-validated (its name parses to a known family and a valid
// configuration, it is not stale, it fits the GPU's limits, it claims no speed above the GPU's
// peak: SpeedBound.hpp) before it is returned; a row that fails is skipped and logged once.
// Answers are memoised per Lookup object. cuBLAS's rows (family "cublas", no configuration) are
// valid where the policy allows cuBLAS, current and of a plausible speed; a row answers only at
// its own size, layout, batch and β class (`exact`); elsewhere the rows of this layout and batch
// predict cuBLAS's time, and cuBLAS answers a nearest size where ours is not predicted faster by
// the policy's margin (below).
//
// Tensor-core (faithful) rows answer only at their own problem, as cuBLAS's do: their accuracy was
// verified there alone, so nearest sizes, other layouts and batches are answered from strict rows.
//
// Match rule: `exact` when an ok row exists at the asked M, N, K (same layout, batch and β class);
// otherwise `nearest_size`, chosen by the family model (model/FamilyModel.hpp): the measured sizes
// of this layout and batch, nearest first by
//     d = |log2(M·N / M'·N')| + ½·|log2(K/K')| + ¼·|log2((M/N) / (M'/N'))|
// (at most kNearestSizes of them, ties: the larger M'·N'·K'), offer their fastest valid rows (at
// most kRowsPerSize each). Rows of one program (a family's template arguments) are one candidate,
// tried at every value of its launch-only parameters (SPLITK: thin 1–16, cutlass 1–8; one binary
// for all) and predicted at the asked size as raw model time × the calibration of its rows and its
// family's; the fastest prediction wins, in its guarded form unless its tiles divide the asked
// size. Then cuBLAS: its time at the asked size is predicted from its measured problems (the
// "cublas" rows, never the baselines: those exist whatever --families) by the roofline; with
// LookupPolicy::cublas (and no family asked), cuBLAS is the answer unless ours is predicted faster
// by cublasMargin (1.25, below; cuBLAS losing a little where ours would have won costs less than
// the reverse). Only programs anchored near the asked size compete, K slices shorter than four k
// tiles are not offered, a guarded form never measured counts double, more K slices than its
// program was measured with 1.5 times, and more than its rows at the anchor size ran never wins
// over cuBLAS, even where another candidate would (docs/design.md, "Unmeasured shapes"). The
// reason names both predictions. A layout or batch with no valid row at all is served the same way from
// the rows of the same layout unbatched, else of nn at this batch, else of nn unbatched
// (nearest_size, the reason says which). `none` when nothing is valid.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "CacheKey.hpp"
#include "Family.hpp"
#include "ResultStore.hpp"
#include "gemmtune/GpuSpec.hpp"

namespace gemmtune::serving {

// Serving reads what db stores.
using namespace gemmtune::db;

enum class MatchQuality { exact, nearest_size, none };
std::string_view toString(MatchQuality quality);

// What a lookup may answer with. cuBLAS is a candidate like any family (its rows: family
// "cublas", instance "cublas_<layout>", measured by the tuner beside every size): where it was
// measured fastest it is the answer; for an unmeasured shape a gemmtune kernel is chosen only
// when the model predicts it faster than cuBLAS there by `cublasMargin`.
struct LookupPolicy {
  bool cublas = true;          // false: gemmtune's kernels only (Library::Options, `tune --families`)
  // Unmeasured shapes: ours must be predicted this many times faster than cuBLAS. 1.25: the family
  // model's median error on held-out rows was 20-21 % on an H100 (bench/model_error; 17 % since the
  // split-K reduction is added to the arithmetic rather than hidden under it), and on 78 random
  // shapes the main job never measured 1.10 still let thin picks run at 0.76x cuBLAS.
  double cublasMargin = 1.25;
  // The most a caller accepts (generator/Family.hpp): strict never serves a tensor-core family's
  // row (Library::Options::precision, `query --precision`).
  PrecisionClass precision = PrecisionClass::strict;
};


struct LookupResult {
  MatchQuality quality = MatchQuality::none;
  std::optional<Config> config;  // runnable at the asked size (guarded when the tiles do not divide it); empty for cuBLAS
  std::string instance;          // config->name(), or "cublas_<layout>"
  bool cublas = false;           // run cuBLAS (loaded at run time), not a gemmtune kernel
  std::string measuredInstance;  // the instance of the row (differs when switched to guarded)
  ProblemKey measuredProblem;    // where the row was measured
  double distance = 0;           // 0 for exact
  double gflops = 0;             // measured, at measuredProblem
  double medianMs = 0;
  std::optional<double> cublasGflops;  // cuBLAS at measuredProblem, when measured
  double predictedMs = 0;        // nearest_size: the family model's time (or cuBLAS's) at the asked size
  std::string reason;            // nearest_size: why this row, in one line
  std::int64_t rowId = 0;
  // The stored binary, only when `instance` is the measured one or its program (another SPLITK:
  // launch-only parameters are no template arguments); else compile `instance`.
  std::string cubin;
  std::vector<std::string> loweredNames;  // its entry points, main kernel first
};

// Why a row cannot be used on `gpu` at `problem` (densely packed, aligned operands): the one
// limits rule (device/LaunchLimits) and the configuration's launch plan; nullopt when it can.
// Exposed for tests and for `results`.
std::optional<std::string> launchProblem(const Config& config, const StoredResult& row, const GpuSpec& gpu,
                                         const ProblemKey& problem);

class Lookup {
 public:
  Lookup(const ResultStore& store, PresentEnvironment present, LookupPolicy policy = {});

  // `family` empty: any family.
  LookupResult best(const GpuSpec& gpu, const ProblemKey& problem, const std::string& family = {});
  // Forget memoised answers, e.g. after new results were written through another connection.
  void clear();
  // How many answers were computed from the database rather than memoised (for tests).
  std::size_t computedCount() const { return computed_; }

 private:
  struct Candidate {
    Config config;  // empty for cuBLAS
    const StoredResult* row;
    bool cublas = false;  // the row is cuBLAS's (exact answers only)
  };
  // What one answer reads: the rows of the asked GPU, layout and β class (and family), and the
  // rows read so far, which candidates point into.
  struct Reads {
    const GpuSpec& gpu;
    const ProblemKey& asked;
    const ProblemKey& rowsOf;  // whose layout and batch the rows are (asked's, or a fallback's)
    std::int64_t gpuId;
    ResultFilter filter;
    std::deque<std::vector<StoredResult>> kept;
  };
  // The measured sizes' offer: the configuration (at its best SPLITK) the family model predicts
  // fastest at the asked size; its row is that program's measured row nearest the asked size.
  struct NearestPick {
    std::optional<Candidate> candidate;
    ProblemKey at;          // where its row was measured
    double predictedMs = 0;  // the family model's time here
    double scoreMs = 0;      // predictedMs times the penalties (a guarded form, more K slices, than measured): what ranks, what faces cuBLAS
    bool moreSlices = false;  // more K slices than its program's rows at the anchor size: never preferred to cuBLAS
    int shapes = 0;         // sizes that offered rows
    int offered = 0;        // rows they offered
    int programs = 0;       // distinct programs among them
  };
  LookupResult compute(const GpuSpec& gpu, const ProblemKey& problem, const std::string& family);
  // The answer for `asked` from the rows of `rowsOf`'s layout and batch (the asked ones, or nn and 1).
  LookupResult computeFrom(const GpuSpec& gpu, std::int64_t gpuId, const ProblemKey& asked, const ProblemKey& rowsOf,
                           const std::string& family);
  // The valid rows of `size`, fastest first (only the first with `firstOnly`).
  std::vector<Candidate> validAt(Reads& reads, const ProblemKey& size, bool firstOnly);
  NearestPick pickNearest(Reads& reads);
  // The programs that compete at a nearest lookup: at each of `sizes`, the kRowsPerSize fastest
  // rows' programs (of `rowsBySize`, fastest first) and every family's fastest program there.
  static std::set<std::string> competingPrograms(const std::vector<ProblemKey>& sizes,
                                                 const std::vector<std::vector<Candidate>>& rowsBySize,
                                                 const GpuSpec& gpu);
  // The nearest_size answer for `pick`: it, or cuBLAS where cuBLAS is predicted faster (see above).
  LookupResult answerNearest(const Reads& reads, const NearestPick& pick, const std::string& family) const;
  // The answer `c`, measured at `measured`, gives.
  LookupResult answer(const Reads& reads, const Candidate& c, MatchQuality quality, const ProblemKey& measured) const;
  std::optional<std::int64_t> gpuId(const GpuSpec& gpu);
  // `row`'s configuration in the form that runs `asked`, if the row is valid for it.
  std::optional<Config> usable(const StoredResult& row, const GpuSpec& gpu, const ProblemKey& asked, bool exact);
  // Whether cuBLAS's `row` may answer `asked`: only exactly (its size, layout, batch and β class),
  // where the policy allows cuBLAS, current and of a plausible speed.
  bool cublasUsable(const StoredResult& row, const GpuSpec& gpu, const ProblemKey& asked, bool exact);
  void skip(const StoredResult& row, const std::string& why);

  const ResultStore& store_;
  PresentEnvironment present_;
  LookupPolicy policy_;
  std::mutex mutex_;  // one store connection: lookups from several threads take turns
  std::unordered_map<std::string, LookupResult> memo_;
  std::set<std::string> reported_;
  std::size_t computed_ = 0;
};

}  // namespace gemmtune::serving
