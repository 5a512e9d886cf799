// TuneOptions: what `gemmtune tune` was asked to do, independent of the command line.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "CandidateFilter.hpp"
#include "Family.hpp"
#include "Shard.hpp"
#include "SizeSpec.hpp"
#include "WorkerProtocol.hpp"

namespace gemmtune {

struct TuneOptions {
  std::vector<GemmShape> sizes;
  std::vector<const Family*> families;
  // cuBLAS as a candidate (`--families` names "cublas", or all): at every size it is verified like
  // a configuration and recorded as a row of family "cublas". Its baseline is timed either way.
  bool cublasRows = true;
  bool resume = true;        // skip candidates that already have a final status in the DB
  double budgetSec = 0;      // per size, GPU work; 0: no limit beyond the pruning rules
  // Which candidates each size times (tuner/search): "model" times every candidate at the first
  // size, then at each larger one at least `carry` per family in the order of their predicted
  // time (more while it keeps finding competitive ones), the rest recorded as pruned:rank with
  // their predicted rank; "exhaustive" times everything; "random" `carry` drawn per size.
  std::string strategy = "model";
  int carry = 24;  // 0: every candidate, whatever the strategy
  int finalists = 3;         // per family at least (more within 4 % of the best, up to twice as many),
                             // re-timed interleaved with cuBLAS before declaring
  // After the requested sizes, each family's finalists are timed on the built-in basis shapes
  // (BasisShapes.hpp) in every requested layout, within `basisShare` of the run's wall time.
  // The CLI turns it off for --no-basis, --shapes, --mnk and --shard.
  bool basis = true;
  // Of the whole run: the basis gets share/(1-share) of the time the sizes took; 1 or more: no
  // limit (tests). 12 %, not the 15 % issue 28 allows: at 15 % the H100's main job took 196-204 s
  // cold against its 200 s bound, its basis 27-29 s of it; at 12 % it took 190 s (one run). The
  // budget follows the sizes' time: in the README main job (one layout) each of the eleven shapes gets
  // about 2 s.
  double basisShare = 0.12;
  FilterOptions filter;
  // First-pass timing of each candidate: cheap, because the GPU is already warm from the
  // previous candidate and the finalists are re-timed interleaved anyway.
  TimingPolicy timing = [] {
    TimingPolicy p;
    p.warmupMs = 10;
    p.budgetMs = 60;
    p.minReps = 5;
    p.maxReps = 100;
    p.spreadTarget = 0.02;
    p.earlyStopRatio = 1.3;
    return p;
  }();
  std::string selfExe;       // this binary: the worker process runs `<selfExe> worker`
  std::string commandLine;
  // Tests of the search on machines without a GPU: a worker command instead of `<selfExe> worker`
  // (tests/fake_worker's `table` mode answers with times computed from the instance and problem)
  // and the driver version rows are keyed with. "{device}" in an argument becomes the index of
  // the GPU the worker plays (several simulated GPUs: GEMMTUNE_SIMULATED_GPU=h100,h100).
  struct SimulatedGpu {
    std::vector<std::string> workerArgv;
    int driverVersion = 13000;
  };
  std::optional<SimulatedGpu> simulated;
  // `--shard I/N` (Shard.hpp): only these (size, family) units are tuned; none: every pair.
  std::optional<std::vector<WorkUnit>> units;

  bool selected(const GemmShape& shape, const Family* family) const {
    if (!units) return true;
    for (const WorkUnit& u : *units)
      if (u.family == family && u.shape == shape) return true;
    return false;
  }
};

}  // namespace gemmtune
