// FinalistRetimer: before a size declares its winners, the best few of each family are re-timed
// in rounds interleaved with cuBLAS, so that clock and thermal drift hit every contender alike.
// Several GPUs share the finalists (each interleaving its share with its own cuBLAS); the first
// GPU's cuBLAS becomes the size's baseline.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ResultStore.hpp"

#include "engine/SizeRun.hpp"

namespace gemmtune {

struct EngineContext;
struct Lane;
class LaneGroup;

class FinalistRetimer {
 public:
  FinalistRetimer(EngineContext& context, LaneGroup& lanes) : context_(context), lanes_(lanes) {}

  // The re-timed rows of one size, per GPU's run id: the caller stores each run's in one write,
  // with cuBLAS's re-timed row (SizeRuns::finish).
  using RowsPerRun = std::map<std::int64_t, std::vector<db::ResultRecord>>;

  // Re-times the finalists of every family of `size` and returns their rows to store (none when
  // no rounds are needed or the run stops mid-rounds); the size's cuBLAS figure becomes the
  // interleaved one.
  RowsPerRun retime(SizeRun& size);
  // Whether retime would run rounds on the GPU (false: fewer than two finalists, or an earlier
  // run's rows hold the interleaved figures): the size's problem need not be set for it.
  bool needsRounds(SizeRun& size) const;
  // A family's contenders for re-timing at one size, fastest first (complete timings only).
  std::vector<Timed*> finalistsOf(const std::string& family, std::vector<Timed>& timed) const;
  // Only a family's finalists need their cubins after it is done at a size (a workload of many
  // shapes would otherwise hold every timed cubin of the run).
  void dropCubinsOfNonFinalists(const Family& family, std::vector<Timed>& timed) const;

 private:
  // What the rounds gave, per finalist (and cuBLAS on the first GPU).
  struct Rounds {
    explicit Rounds(size_t finalists) : samples(finalists), reps(finalists, 0), retimedOn(finalists, nullptr) {}
    std::vector<std::vector<double>> samples;  // one median per round
    std::vector<int> reps;
    std::vector<const Lane*> retimedOn;
    std::vector<double> baselineSamples;
    std::vector<double> cublasLtSamples;  // SizeOutcome::cublasLtAlgo's, on the first GPU
  };

  // Every family's finalists at `size` (its best few where the size says so).
  std::vector<Timed*> contenders(SizeRun& size) const;
  // Whether the stored rows hold the interleaved figures already (see the .cpp).
  bool retimedByAnEarlierRun(SizeRun& size) const;
  Rounds runRounds(const std::vector<Timed*>& finalists, const SizeOutcome& out);
  // One round's timing of finalist `i` on `lane`.
  void retimeOne(size_t i, Timed& finalist, int round, const TimingPolicy& quick, const GemmShape& shape,
                 Lane& lane, Rounds& rounds);
  RowsPerRun retimedRows(const std::vector<Timed*>& finalists, const Rounds& rounds, SizeOutcome& out);

  EngineContext& context_;
  LaneGroup& lanes_;
};

}  // namespace gemmtune
