// RowRecorder: every candidate ends as a result row, in the run of the GPU that measured it (the
// group's first run for rows no GPU measured). Keys the rows, reads what earlier runs stored at a
// size (resume), and records rows not timed (rejected, pruned), resumed and timed.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "Candidate.hpp"
#include "ResultStore.hpp"
#include "WorkerProtocol.hpp"
#include "engine/SizeRun.hpp"

namespace gemmtune {

struct EngineContext;
class LaneGroup;

class RowRecorder {
 public:
  RowRecorder(EngineContext& context, LaneGroup& lanes) : context_(context), lanes_(lanes) {}

  db::CacheKey keyFor(const Config& config, const std::string& sourceHash, const GemmShape& shape) const;
  // The row as far as the candidate tells (configuration, launch, compiled resources): no status.
  db::ResultRecord rowFor(const Candidate& c, const std::string& srcHash, const GemmShape& shape) const;

  // cuBLAS's row at `shape` from the worker's verified timing `r` on a GPU whose cuBLAS reports
  // `cublasVersion`: family "cublas", instance "cublas_<layout>", no parameters, no cubin; its
  // median `medianMs` (the re-timed one where the finalists were re-timed). The cuBLAS version
  // stands where a kernel's source hash does (it is what the row measured), default math in the
  // compile options.
  // With `ltAlgo` (a CublasLtAlgo name), the row of that cuBLASLt configuration:
  // "cublas_<layout>_<ltAlgo>", FP32 compute in the compile options.
  db::ResultRecord cublasRow(const GemmShape& shape, const CandidateResult& r, double medianMs, int cublasVersion,
                             const std::string& ltAlgo = "") const;

  // Reads the final and the pruned:rank rows an earlier run left at `shape` (resume).
  void readStoredRows(const GemmShape& shape);
  // The final row an earlier run left for this candidate at this size, or null.
  const db::StoredResult* storedRow(const Candidate& c, const std::string& srcHash, const GemmShape& shape) const;
  const db::StoredResult* storedRow(const db::CacheKey& key) const;
  // The fastest ok cuBLASLt configuration's row an earlier run left whose key is `like` in all but
  // the instance (this GPU, driver, build, cuBLAS and problem), or null.
  const db::StoredResult* storedCublasLtRow(const db::CacheKey& like) const;
  // The ok rows of other cuBLASLt configurations stored with `kept`'s key but for the instance (a
  // fresh run searched again and kept `kept`), as pruned:superseded rows naming it: never served.
  std::vector<db::ResultRecord> supersededCublasLtRows(const db::ResultRecord& kept) const;
  bool hasStoredRow(const Candidate& c, const std::string& srcHash, const GemmShape& shape) const {
    return storedRow(c, srcHash, shape) != nullptr;
  }
  // The reason of a pruned:rank row an earlier run left for this candidate, or null.
  const std::string* storedRankPruning(const Candidate& c, const std::string& srcHash, const GemmShape& shape) const;

  // Records a candidate that is not timed (rejected, or pruned with its reason): at once, or
  // into `batch` for recordBatch (one transaction for a family's thousands of such rows).
  void recordUntimed(const Candidate& c, const std::string& srcHash, FamilyTurn& turn,
                     std::vector<db::ResultRecord>* batch = nullptr);
  void recordBatch(std::vector<db::ResultRecord>& batch);
  // Counts a row an earlier, interrupted run measured with the same cache key; its median when
  // it was timed ok.
  std::optional<double> recordResumed(const db::StoredResult& stored, const Candidate& c, FamilyTurn& turn);
  // Records what the worker measured for `c` into `row` (from rowFor) in the run `runId`; its
  // median when ok.
  std::optional<double> recordTimed(db::ResultRecord row, const CandidateResult& r, const Candidate& c,
                                    FamilyTurn& turn, std::int64_t runId);

  // One transaction for `recs` (one row or a batch); store failures become IoError.
  void record(std::span<const db::ResultRecord> recs, std::int64_t runId);
  void record(const db::ResultRecord& rec, std::int64_t runId) { record(std::span(&rec, 1), runId); }

 private:
  EngineContext& context_;
  LaneGroup& lanes_;
  std::unordered_map<std::string, db::StoredResult> stored_;  // cache key hash -> final row, every size used
  std::unordered_map<std::string, std::string> storedRankPruned_;  // cache key hash -> reason, rows stored pruned:rank
};

}  // namespace gemmtune
