// CandidateFilter: the decisions that take a candidate out of the timing queue, each with its
// numbers. Before compiling: the family's static and target constraints, threads per block and
// shared memory, the launch plan for the size (refused: "plan") and its grid. After compiling:
// registers, shared memory as compiled and at least one block per SM. The limits are the one
// rule of device/LaunchLimits.
//
// Spills do not reject by default: local memory is legal and correct, the spilled values often
// stay in L1, and only timing can tell whether a spilling configuration loses. They are flagged
// in the candidate's note (and rejected with FilterOptions::rejectSpills).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "Candidate.hpp"
#include "gemmtune/GpuSpec.hpp"

namespace gemmtune {

struct FilterOptions {
  bool rejectSpills = false;
  // Optional analytic pruning (off by default, reported as "pruned:<rule>", never silent):
  // "underfill" skips configurations whose grid has fewer blocks than the GPU has SMs at the
  // problem size, leaving SMs idle for the whole run.
  bool prune = false;
};

// A candidate for `config` with its launch geometry filled in and the checks that need no
// compiler applied. Returns it accepted when it should be compiled.
Candidate checkBeforeCompile(const Config& config, const GpuSpec& gpu, const std::optional<GemmShape>& size);

// Records the compile result and applies the checks that need it (no-op unless `c` was
// accepted before compiling).
void checkAfterCompile(Candidate& c, const GpuSpec& gpu, std::shared_ptr<const CompileResult> compiled,
                       const std::optional<GemmShape>& size, const FilterOptions& options = {});

}  // namespace gemmtune
