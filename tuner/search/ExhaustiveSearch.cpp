// `exhaustive`: every candidate at every size, the family's classic configuration first (a
// yardstick for the worker's early stop), then enumeration order. The reference the other
// strategies are measured against.
#include "SearchOrder.hpp"
#include "SearchStrategy.hpp"

namespace gemmtune {

namespace {

class ExhaustiveSearch final : public OrderedSearch {
 public:
  std::string name() const override { return "exhaustive"; }
  void start(const SearchContext&, std::vector<SearchPoint> points) override { setOrder(classicFirst(points)); }
  void tell(size_t, const Measurement&) override {}
  // Every point is proposed: only a run that stopped leaves some, and it records none of them.
  std::string notTimedReason(size_t) const override { return "the run stopped before it was timed"; }
};

}  // namespace

std::unique_ptr<SearchStrategy> makeExhaustiveSearch() { return std::make_unique<ExhaustiveSearch>(); }

}  // namespace gemmtune
