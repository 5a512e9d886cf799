// `model` (the default): every candidate at the first size; at each later size, candidates in
// the order of their time predicted from the most similar size measured (WaveModel.hpp: predictMs, a wave
// model that knows a tile underfilling the GPU at a small size can win at a large one), at least
// `carry` of them, then on while the search keeps finding competitive ones: it stops once
// `patience` candidates in a row came no closer than 2 % to the best. Candidates with nothing
// measured at a smaller size come after the predicted ones. The classic configuration comes
// first, then the seeds (SearchPoint::seed: the family's skinny tiles at a skinny shape), timed
// on top of `carry` and outside the patience count.
//
// It learns only within a series: one layout and one batch count. A configuration's instance
// name already differs per layout (its loads differ), and a batched call is another workload: a
// batch of small products fills the GPU through the grid's z where one product alone underfills
// it, and the batches share no operands in L2, so how a configuration ranks at batch 1 says little
// of how it ranks at batch 64. Sizes are tuned smallest first, so each series still starts from
// its own smallest size and ranks its larger ones from it.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <vector>

#include "SearchOrder.hpp"
#include "SearchStrategy.hpp"
#include "SizeDistance.hpp"
#include "WaveModel.hpp"

namespace gemmtune {

namespace {

constexpr double kCompetitive = 1.02;  // within 2 % of the best so far

class ModelSearch final : public OrderedSearch {
 public:
  explicit ModelSearch(int carry) : carry_(carry), patience_(std::max(4, carry / 2)) {}
  std::string name() const override { return "model"; }

  void start(const SearchContext& context, std::vector<SearchPoint> points) override {
    context_ = context;
    points_ = std::move(points);
    predicted_.assign(points_.size(), -1);
    for (size_t i = 0; i < points_.size(); ++i)
      if (auto it = history_.find(historyKey(points_[i].base, context.shape)); it != history_.end()) {
        const Measured& m = nearest(it->second, context.shape);
        predicted_[i] = predictMs(m.ms, key(m.shape), m.blocks, key(context.shape), points_[i].blocks,
                                  Residency{m.blocksPerSm, points_[i].warpsPerBlock}, context.smCount);
      }
    const bool anyHistory = std::any_of(predicted_.begin(), predicted_.end(), [](double p) { return p >= 0; });
    everything_ = carry_ <= 0 || !anyHistory;
    std::vector<size_t> order = classicFirst(points_);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      if (points_[a].classic != points_[b].classic) return points_[a].classic;
      if (points_[a].seed != points_[b].seed) return points_[a].seed;
      const bool ka = predicted_[a] >= 0, kb = predicted_[b] >= 0;
      if (ka != kb) return ka;
      return ka && predicted_[a] < predicted_[b];
    });
    setOrder(std::move(order));
    // Ranks among the predicted candidates, as the reasons state them.
    rank_.assign(points_.size(), 0);
    ranked_ = 0;
    for (size_t i : order_)
      if (predicted_[i] >= 0 && !points_[i].classic && !points_[i].seed) rank_[i] = ++ranked_;
    timed_ = 0;
    sinceCompetitive_ = 0;
    bestMs_ = 0;
    stopped_ = false;
  }

  std::optional<size_t> next() override {
    // Never before a seed (defensive: seeds come first and spend neither the carry nor the patience).
    if (pos_ < order_.size() && !points_[order_[pos_]].seed && !everything_ && timed_ >= carry_ &&
        sinceCompetitive_ >= patience_) {
      stopped_ = true;
      return std::nullopt;
    }
    return OrderedSearch::next();
  }

  void tell(size_t index, const Measurement& m) override {
    const SearchPoint& p = points_[index];
    // Seeds are timed on top of --carry and never use up the patience (a fast seed still sets
    // the best that ranked candidates must come within 2 % of).
    if (!p.classic && !p.seed) ++timed_;
    if (!p.seed) ++sinceCompetitive_;
    if (!m.medianMs) return;
    const double ms = *m.medianMs;
    auto& seen = history_[historyKey(p.base, context_.shape)];
    std::erase_if(seen, [&](const Measured& old) { return old.shape == context_.shape; });
    seen.push_back(Measured{context_.shape, ms, p.blocks, m.blocksPerSm});
    if (bestMs_ == 0 || ms <= bestMs_ * kCompetitive) sinceCompetitive_ = 0;
    if (bestMs_ == 0 || ms < bestMs_) bestMs_ = ms;
  }

  size_t expectedRemaining() const override {
    const size_t left = order_.size() - pos_;
    if (everything_) return left;
    const size_t seeds = static_cast<size_t>(
        std::count_if(order_.begin() + static_cast<std::ptrdiff_t>(pos_), order_.end(), [&](size_t i) { return points_[i].seed; }));
    const int more = std::max(carry_ - timed_, patience_ - sinceCompetitive_);
    return std::min(left, seeds + static_cast<size_t>(std::max(0, more)));
  }

  bool wroteNotTimedReason(const std::string& reason) const override {
    return reason.rfind(kRanked, 0) == 0 || reason.rfind(kUnmeasured, 0) == 0;
  }

  std::string notTimedReason(size_t index) const override {
    const std::string stop = fmt::format("the search stopped after {} timed, the last {} none within 2 % of the best",
                                         timed_, patience_);
    if (predicted_[index] < 0) return fmt::format("{}; {}", kUnmeasured, stop);
    const Measured& from = nearest(history_.at(historyKey(points_[index].base, context_.shape)), context_.shape);
    return fmt::format("{}{} of {} by predicted time ({:.4g} ms, from its time at {}); {}", kRanked, rank_[index], ranked_,
                       predicted_[index], from.shape.str(), stop);
  }

 private:
  struct Measured {
    GemmShape shape;
    double ms = 0;
    long long blocks = 0;
    int blocksPerSm = 0;
  };
  static db::ProblemKey key(const GemmShape& g) { return db::ProblemKey{g.M, g.N, g.K}; }
  // A configuration's measurements in one series (layout and batch): the only ones it learns from.
  static std::string historyKey(const std::string& base, const GemmShape& shape) {
    return fmt::format("{} {} batch {}", base, shape.layout.text(), shape.batch);
  }
  // The measurement of a configuration at the shape most like `shape` (the serving rule's
  // distance: output area first, then depth and aspect). A workload's previous shape may be
  // nothing like the next (27x32x3523 after 4096³); squares in ascending order take the size below.
  static const Measured& nearest(const std::vector<Measured>& seen, const GemmShape& shape) {
    return *std::min_element(seen.begin(), seen.end(), [&](const Measured& a, const Measured& b) {
      return sizeDistance(key(shape), key(a.shape)) < sizeDistance(key(shape), key(b.shape));
    });
  }

  // How its reasons begin (notTimedReason writes them, wroteNotTimedReason recognises them).
  static constexpr const char* kRanked = "rank ";
  static constexpr const char* kUnmeasured = "not measured at a smaller size";

  int carry_, patience_;
  std::map<std::string, std::vector<Measured>> history_;  // by historyKey: every shape of the series measured
  SearchContext context_;
  std::vector<SearchPoint> points_;
  std::vector<double> predicted_;  // -1: nothing measured at a smaller size
  std::vector<size_t> rank_;
  size_t ranked_ = 0;
  int timed_ = 0, sinceCompetitive_ = 0;
  double bestMs_ = 0;
  bool everything_ = true, stopped_ = false;
};

}  // namespace

std::unique_ptr<SearchStrategy> makeModelSearch(const StrategyOptions& options) {
  return std::make_unique<ModelSearch>(options.carry);
}

}  // namespace gemmtune
