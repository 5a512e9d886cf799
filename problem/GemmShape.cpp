#include "GemmShape.hpp"

#include <fmt/format.h>

namespace gemmtune {

std::string Layout::text() const { return std::string(transA ? "t" : "n") + (transB ? "t" : "n"); }

std::optional<Layout> Layout::parse(std::string_view text) {
  for (const Layout& l : all())
    if (l.text() == text) return l;
  return std::nullopt;
}

const std::array<Layout, 4>& Layout::all() {
  static const std::array<Layout, 4> layouts{Layout{false, false}, Layout{false, true}, Layout{true, false}, Layout{true, true}};
  return layouts;
}

std::string GemmShape::str() const {
  std::string out = M == N && N == K ? std::to_string(M) : fmt::format("{}x{}x{}", M, N, K);
  if (layout != Layout{}) out += " " + layout.text();
  if (batch != 1) out += fmt::format(" batch {}", batch);
  return out;
}

}  // namespace gemmtune
