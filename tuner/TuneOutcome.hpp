// TuneOutcome: what one tuning run found for one GPU and problem, for the final table and --json.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "SizeSpec.hpp"

namespace gemmtune {

struct FamilyOutcome {
  std::string family;
  std::string bestInstance;          // empty: no ok candidate
  double bestMs = 0;
  bool bestPartial = false;
  std::string classicInstance;       // the well-known fixed configuration of the family
  std::optional<double> classicMs;
  std::map<std::string, int> statusCounts;  // "ok" -> 40, "rejected" -> 300, ...
};

struct SizeOutcome {
  GemmShape shape;
  std::optional<double> cublasMs;
  bool cublasRetimed = false;  // cublasMs was re-timed by this run's interleaved rounds
  // cuBLASLt's configuration that beat cuBLAS's own call here (a CublasLtAlgo name; empty: none),
  // and its median in the interleaved rounds where they ran.
  std::string cublasLtAlgo;
  std::optional<double> cublasLtMs;
  std::vector<FamilyOutcome> families;
  std::string bestInstance;          // over all families
  double bestMs = 0;
  int timed = 0, resumed = 0;
};

// The basis (BasisShapes.hpp): each family's finalists timed on the built-in shape regimes.
struct BasisOutcome {
  std::vector<SizeOutcome> shapes;   // every basis shape begun, timed or resumed
  std::vector<std::string> skipped;  // shapes left untimed: the basis's time was spent before them
  double seconds = 0;                // wall time it took
  double budgetSeconds = 0;          // its share of the run
  double runShare = 0;               // seconds / the run's wall time
};

struct GpuOutcome {
  std::string gpuName;
  std::vector<int> deviceIndices;    // the identical GPUs that shared the work (-1: simulated/offline)
  std::vector<int> lostDevices;      // of those, the ones that dropped out (canary kept failing)
  std::vector<SizeOutcome> sizes;
  std::optional<BasisOutcome> basis;  // none: --no-basis (or a run it does not apply to)
  double wallSeconds = 0;
  double gpuBusySeconds = 0;         // wall time the workers spent on requests, summed over the GPUs
  int workerRestarts = 0;
  int warmKeepingRuns = 0;  // short cuBLAS runs that held the GPU's clock while NVRTC worked
  bool interrupted = false;
};

}  // namespace gemmtune
