// The results store names a problem by db::ProblemKey (sizes, layout text, β class, batch); the
// rest of the house by GemmShape. These convert between the two.
#pragma once

#include "CacheKey.hpp"
#include "GemmShape.hpp"

namespace gemmtune::serving {

db::ProblemKey problemKeyOf(const GemmShape& shape, std::string betaClass = "any");
// A stored layout that is none of nn, nt, tn, tt reads as nn (such rows are refused elsewhere).
GemmShape shapeOf(const db::ProblemKey& key);

}  // namespace gemmtune::serving
