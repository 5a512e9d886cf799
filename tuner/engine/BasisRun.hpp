// BasisRun: the last phase of the main job. Once the requested sizes are finished, each family's
// finalists of this run (FinalistRetimer's, at every requested size of a layout; deduplicated),
// after its skinnyTiles at a skinny shape, at every value of their launch-only parameters
// (SPLITK: the same program; basisCandidates), are timed on the built-in basis shapes
// (BasisShapes.hpp) in each requested layout, batch 1: a basis shape is a size like any other
// (cuBLAS baseline, rows verified and recorded, resumed, finalists re-timed), whose candidates are
// this fixed list instead of the search strategy's pick of the space. Its time is capped at
// TuneOptions::basisShare of the run: shared out evenly over the shapes (the first ones when it
// is short), what it could not time is recorded pruned:budget.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "TuneOutcome.hpp"
#include "engine/EngineContext.hpp"
#include "engine/SizeRun.hpp"

namespace gemmtune {

class FinalistRetimer;
class RowRecorder;
class SizeRuns;

class BasisRun {
 public:
  // One family's turn at a size with a given list of configurations (TuningEngine::tuneFamily).
  using Turn = std::function<void(const Family&, SizeRun&, const std::vector<Config>&)>;

  BasisRun(EngineContext& context, RowRecorder& rows, SizeRuns& sizes, FinalistRetimer& finalists)
      : context_(context), rows_(rows), sizes_(sizes), finalists_(finalists) {}

  // After `family`'s turn at every size of `order`: the guarded forms the basis will time its
  // best so far in compile now, in the background, while later families are timed.
  void prefetch(const Family& family, const std::vector<GemmShape>& order);
  // The basis, after every requested size of `order` was finished in `sizesSeconds` of wall time.
  BasisOutcome run(const std::vector<GemmShape>& order, double sizesSeconds, const Turn& turn);

 private:
  // Per family (in the run's order) the configurations to time.
  using Lists = std::vector<std::pair<const Family*, std::vector<Config>>>;
  // `family`'s finalists at the sizes of `order` in `layout`, best ranks first, unguarded, one
  // per program (runShape puts the family's skinnyTiles first at a skinny shape and adds the
  // other launch-only values).
  std::vector<Config> candidatesOf(const Family& family, const Layout& layout, const std::vector<GemmShape>& order) const;
  // Every family's that has some.
  Lists candidatesIn(const Layout& layout, const std::vector<GemmShape>& order) const;
  // One basis shape's outcome, and whether its time was spent while a candidate had no stored row
  // or its finalists were not re-timed (then the summary names it untimed).
  struct ShapeOutcome {
    SizeOutcome outcome;
    bool leftUntimed = false;
  };
  // One basis shape within `shapeSeconds`; `spent`: its time is gone, its rows are recorded only.
  ShapeOutcome runShape(const GemmShape& shape, const Lists& lists, double shapeSeconds, bool spent, const Turn& turn);
  // Whether some candidate at `shape` has no stored final row (then the GPU is needed).
  bool needsTiming(const GemmShape& shape, const Lists& lists) const;

  EngineContext& context_;
  RowRecorder& rows_;
  SizeRuns& sizes_;
  FinalistRetimer& finalists_;
  double budgetSec_ = 0;
  std::string reason_;  // of the rows the budget left untimed
};

// `config` at every value of its family's launch-only parameters (SPLITK: one program for all),
// in the order worth timing at `shape` when the budget may cut the tail: nearest first to the
// count that gives each of `smCount` SMs a block (the slices a skinny or long-K shape needs).
std::vector<Config> atEveryLaunchValue(const Config& config, const GemmShape& shape, int smCount);

// What a basis shape times of `family`, in order: at a skinny shape (isSkinnyShape) the family's
// skinnyTiles that its --params domains keep, always guarded, then `finalists` (one per program),
// each in the form that runs `shape` (basisFormFor), at every launch value (atEveryLaunchValue), breadth first: every
// program at its likeliest value before any at its second.
std::vector<Config> basisCandidates(const Family& family, const std::vector<Config>& finalists, const GemmShape& shape,
                                    int smCount);

// `config` in the form that runs `shape` (a configuration violating a constraint: guarded, to be
// rejected with its reason by the screen).
Config basisFormFor(Config config, const GemmShape& shape);

}  // namespace gemmtune
