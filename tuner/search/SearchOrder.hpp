// Orders shared by the search strategies.
#pragma once

#include <optional>
#include <vector>

#include "SearchStrategy.hpp"

namespace gemmtune {

// Indices of `points`: the classic configuration first, then the rest in enumeration order.
inline std::vector<size_t> classicFirst(const std::vector<SearchPoint>& points) {
  std::vector<size_t> order;
  for (size_t i = 0; i < points.size(); ++i)
    if (points[i].classic) order.push_back(i);
  for (size_t i = 0; i < points.size(); ++i)
    if (!points[i].classic) order.push_back(i);
  return order;
}

// A strategy that proposes a prefix of an order fixed at start(): the order and the position.
class OrderedSearch : public SearchStrategy {
 public:
  const std::vector<size_t>& plan() const override { return order_; }
  std::optional<size_t> next() override {
    if (pos_ >= order_.size()) return std::nullopt;
    return order_[pos_++];
  }
  size_t expectedRemaining() const override { return order_.size() - pos_; }

 protected:
  void setOrder(std::vector<size_t> order) {
    order_ = std::move(order);
    pos_ = 0;
  }
  std::vector<size_t> order_;
  size_t pos_ = 0;
};

}  // namespace gemmtune
