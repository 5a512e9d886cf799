// SizeRuns: the sizes of a run, each prepared on every GPU when a family first needs it and
// finished once every family had its turn: finalists re-timed, cuBLAS baselines (and, where cuBLAS
// is a candidate, its verified row) recorded, per-family bests declared.
#pragma once

#include <map>
#include <string>

#include "engine/FinalistRetimer.hpp"
#include "engine/SizeRun.hpp"

namespace gemmtune {

struct EngineContext;
class LaneGroup;
class RowRecorder;

class SizeRuns {
 public:
  SizeRuns(EngineContext& context, LaneGroup& lanes, RowRecorder& rows, FinalistRetimer& finalists)
      : context_(context), lanes_(lanes), rows_(rows), finalists_(finalists) {}

  // Makes `shape` every worker's problem: the first time, its stored rows are read (resume) and
  // cuBLAS is timed there (the baseline; its long warm-up brings the GPU to its boost clock).
  SizeRun& use(const GemmShape& shape);
  // The size's run with its stored rows read, on no GPU yet (a basis shape whose rows are all
  // stored needs none: BasisRun); `use` prepares it when the GPU is needed.
  SizeRun& open(const GemmShape& shape);
  // The size's run, or null where no family was tuned at it.
  SizeRun* find(const GemmShape& shape);
  // After every family: finalists re-timed (unless `retime` is false: a basis shape whose time
  // was spent before it began), baselines recorded, per-family bests.
  SizeOutcome finish(SizeRun& run, bool retime = true);

 private:
  // The first use of a size on the GPUs: cuBLAS timed on every GPU.
  void prepare(SizeRun& run, const GemmShape& shape);
  void recordBaselines(SizeRun& run);
  // cuBLAS as a candidate (TuneOptions::cublasRows): its verified row at the size, added to the
  // rows `finish` stores with the re-timed ones (none when a stored row stands).
  void addCublasRow(SizeRun& run, FinalistRetimer::RowsPerRun& rows);
  // cuBLASLt's configurations searched on the first GPU where cuBLAS is a candidate; the fastest
  // kept where it beat cuBLAS's own call (and an earlier run's kept configuration stands).
  void searchCublasLt(SizeRun& run);
  void addCublasLtRow(SizeRun& run, FinalistRetimer::RowsPerRun& rows);

  EngineContext& context_;
  LaneGroup& lanes_;
  RowRecorder& rows_;
  FinalistRetimer& finalists_;
  std::map<std::string, SizeRun> runs_;  // by GemmShape::str()
  SizeRun* current_ = nullptr;           // the workers' problem now
};

}  // namespace gemmtune
