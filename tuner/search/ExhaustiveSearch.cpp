// `exhaustive`: every candidate at every size, the family's classic configuration first (a
// yardstick for the worker's early stop), then enumeration order. The reference the other
// strategies are measured against.
#include "SearchOrder.hpp"
#include "SearchStrategy.hpp"

namespace gemmtune {

namespace {

class ExhaustiveSearch final : public SearchStrategy {
 public:
  std::string name() const override { return "exhaustive"; }
  bool wantsResources(const GemmShape&) const override { return false; }
  void start(const SearchContext&, std::vector<SearchPoint> points) override {
    order_ = classicFirst(points);
    pos_ = 0;
  }
  std::optional<size_t> next() override {
    if (pos_ >= order_.size()) return std::nullopt;
    return order_[pos_++];
  }
  void tell(size_t, std::optional<double>) override {}
  std::string notTimedReason(size_t) const override { return "the run stopped before it was timed"; }

 private:
  std::vector<size_t> order_;
  size_t pos_ = 0;
};

}  // namespace

std::unique_ptr<SearchStrategy> makeExhaustiveSearch() { return std::make_unique<ExhaustiveSearch>(); }

}  // namespace gemmtune
