// SizeRun: one size's state while the families take their turns at it (TuningEngine::run), and
// FamilyTurn: one family's turn at one size, what its phases add to.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "Family.hpp"
#include "ProgressLine.hpp"
#include "ResultStore.hpp"
#include "SizeSpec.hpp"
#include "TuneOptions.hpp"
#include "TuneOutcome.hpp"
#include "WorkerProtocol.hpp"

namespace gemmtune {

struct Lane;

// The unguarded instance name: one configuration's identity across sizes.
inline std::string baseName(const Config& c) {
  Config u = c;
  u.guarded = false;
  return u.name();
}

// A candidate timed at a size (this run, or resumed from an earlier one).
struct Timed {
  std::string instance;    // canonical name as timed
  std::string base;        // unguarded name: identity across sizes
  const Family* family = nullptr;
  double medianMs = 0;
  bool partial = false;
  db::ResultRecord record; // as stored, for re-recording after the final re-timing
  Config config;           // as timed: families need not be built in, so names are not re-parsed
};

struct SizeRun {
  SizeOutcome out;
  std::vector<Timed> timed;
  ProgressState progress;
  std::map<const Lane*, CandidateResult> baselines;  // cuBLAS when the size was first prepared
  // cuBLASLt's configuration: searched on `cublasLtLane` this run, or an earlier run's row.
  std::optional<CublasLtPick> cublasLt;
  const Lane* cublasLtLane = nullptr;
  std::optional<db::StoredResult> storedCublasLt;
  bool prepared = false;                             // set on the workers, its cuBLAS baseline timed
  double gpuSec = 0;                                 // against --budget
  // A basis shape's turn (BasisRun): once this time is past, the rest of the turn is
  // pruned:budget with `deadlineReason`.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  std::string deadlineReason;
  // > 0: only each family's best this many are re-timed with cuBLAS (a basis shape, whose time
  // is better spent on more candidates than on ordering near-equals).
  size_t retimedPerFamily = 0;
};

// Once the GPU seconds of a size are spent (--budget), or its turn's deadline has passed (the
// basis's share of the run), the rest of it is pruned:budget.
inline bool overBudget(const SizeRun& size, const TuneOptions& options) {
  if (size.deadline && std::chrono::steady_clock::now() >= *size.deadline) return true;
  return options.budgetSec > 0 && size.gpuSec > options.budgetSec;
}

struct FamilyTurn {
  FamilyTurn(const Family& family, SizeRun& size) : family(family), shape(size.out.shape), size(size) {
    outcome.family = family.name;
  }
  const Family& family;
  const GemmShape& shape;
  SizeRun& size;
  FamilyOutcome outcome;  // joins size.out.families when the turn ends
};

// Status family used for the counts in the final table: "rejected:smem" -> "rejected".
inline std::string statusClass(const std::string& status) { return status.substr(0, status.find(':')); }

}  // namespace gemmtune
