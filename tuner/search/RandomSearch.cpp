// `random`: the model-free baseline. At every size the classic configuration, then `carry`
// candidates drawn without replacement (0: all, in random order). The draw is seeded by the size
// and the candidates' names, so a run is repeatable.
#include <fmt/format.h>

#include <algorithm>
#include <random>

#include "SearchOrder.hpp"
#include "SearchStrategy.hpp"

namespace gemmtune {

namespace {

std::uint64_t fnv1a(const std::string& s, std::uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

class RandomSearch final : public OrderedSearch {
 public:
  explicit RandomSearch(int sample) : sample_(sample) {}
  std::string name() const override { return "random"; }
  void start(const SearchContext& context, std::vector<SearchPoint> points) override {
    std::uint64_t seed = fnv1a(context.shape.str());
    for (const auto& p : points) seed = fnv1a(p.base, seed);
    std::vector<size_t> order, rest;
    for (size_t i : classicFirst(points)) (points[i].classic ? order : rest).push_back(i);
    std::mt19937_64 rng(seed);
    std::shuffle(rest.begin(), rest.end(), rng);
    if (sample_ > 0 && rest.size() > static_cast<size_t>(sample_)) rest.resize(sample_);
    order.insert(order.end(), rest.begin(), rest.end());
    setOrder(std::move(order));
  }
  void tell(size_t, const Measurement&) override {}
  bool wroteNotTimedReason(const std::string& reason) const override { return reason.find(kTag) != std::string::npos; }

  std::string notTimedReason(size_t) const override {
    return fmt::format("not among the {} drawn at random at this size {}", sample_, kTag);
  }

 private:
  static constexpr const char* kTag = "(--strategy random)";  // in every reason it writes
  int sample_;
};

}  // namespace

std::unique_ptr<SearchStrategy> makeRandomSearch(const StrategyOptions& options) {
  return std::make_unique<RandomSearch>(options.carry);
}

}  // namespace gemmtune
