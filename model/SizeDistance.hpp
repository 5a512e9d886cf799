// SizeDistance: how far apart two problem sizes are for the purpose of borrowing a measurement —
// the lookup serves an untuned shape from the nearest tuned one, and the model search predicts a
// size from the nearest one it measured.
#pragma once

#include "CacheKey.hpp"

namespace gemmtune {

// d = |log2 of the output-area ratio| + 0.5·|log2 of the depth ratio| + 0.25·|log2 of the aspect
// ratio|: 0 for the same size; area weighs most (it sets the tile count, so the waves).
double sizeDistance(const db::ProblemKey& asked, const db::ProblemKey& measured);

}  // namespace gemmtune
