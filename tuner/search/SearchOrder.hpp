// Orders shared by the search strategies.
#pragma once

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

}  // namespace gemmtune
