// BasisShapes: the built-in shape regimes the main job times each family's finalists on after the
// requested sizes (TuningEngine, tuner/engine/BasisRun), so that the lookup's per-family model has
// measured rows of every family in every regime (issue 28: a database of square sizes alone never
// let `thin` be chosen for a skinny shape, nor split-K where few tiles leave SMs idle). Small
// problems on purpose: the basis gets at most 12 % of the run's wall time.
#pragma once

#include <string>
#include <vector>

#include "SizeSpec.hpp"

namespace gemmtune {

struct BasisShape {
  GemmShape shape;     // nn, batch 1: each requested layout gets its own copy (basisShapesFor)
  std::string regime;  // "skinny M", "GEMV", ...: the summary's label
  std::string why;     // what it shows the model, on the H100's 132 SMs
};

// The basis in order of priority: when the budget is short, the first ones are timed.
const std::vector<BasisShape>& basisShapes();

// Every basis shape in each of `layouts` (shapes outer), batch 1; a shape `requested` holds
// already (same size, layout and batch) is left out: it is tuned in full there.
std::vector<GemmShape> basisShapesFor(const std::vector<Layout>& layouts, const std::vector<GemmShape>& requested);

// The regime of a basis shape (any layout), or "" for another shape.
std::string basisRegimeOf(const GemmShape& shape);

// Whether M or N is at most 64 (issue 28's skinny class): where a family's skinnyTiles are timed
// first.
bool isSkinnyShape(const GemmShape& shape);

}  // namespace gemmtune
