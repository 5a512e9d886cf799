#include "ProblemKeys.hpp"

namespace gemmtune::serving {

db::ProblemKey problemKeyOf(const GemmShape& s, std::string betaClass) {
  return db::ProblemKey{s.M, s.N, s.K, s.layout.text(), std::move(betaClass), s.batch};
}

GemmShape shapeOf(const db::ProblemKey& key) {
  return GemmShape{key.m, key.n, key.k, Layout::parse(key.layout).value_or(Layout{}), key.batch};
}

}  // namespace gemmtune::serving
