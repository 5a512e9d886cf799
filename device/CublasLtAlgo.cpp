#include "CublasLtAlgo.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <set>

namespace gemmtune {

namespace {

// The fields in name order, each with the letter that introduces it.
constexpr std::array<char, 9> kLetters = {'l', 't', 'k', 'r', 'w', 's', 'c', 'i', 'g'};

std::array<int*, 9> fieldsOf(CublasLtAlgo& a) {
  return {&a.id, &a.tile, &a.splitK, &a.reduction, &a.swizzle, &a.stages, &a.custom, &a.innerShape, &a.clusterShape};
}

}  // namespace

std::string CublasLtAlgo::name() const {
  return fmt::format("lt{}_t{}_k{}_r{}_w{}_s{}_c{}_i{}_g{}", id, tile, splitK, reduction, swizzle, stages, custom,
                     innerShape, clusterShape);
}

std::optional<CublasLtAlgo> CublasLtAlgo::parse(std::string_view name) {
  CublasLtAlgo a;
  const auto fields = fieldsOf(a);
  std::size_t at = 0;
  for (std::size_t i = 0; i < kLetters.size(); ++i) {
    if (i > 0 && (at >= name.size() || name[at++] != '_')) return std::nullopt;
    if (at >= name.size() || name[at++] != kLetters[i]) return std::nullopt;
    if (i == 0 && (at >= name.size() || name[at++] != 't')) return std::nullopt;  // "lt"
    const char* first = name.data() + at;
    const char* last = name.data() + name.size();
    auto [end, ec] = std::from_chars(first, last, *fields[i]);
    if (ec != std::errc() || end == first || *fields[i] < 0) return std::nullopt;
    at += static_cast<std::size_t>(end - first);
  }
  if (at != name.size() || a.splitK < 1) return std::nullopt;
  return a;
}

std::vector<std::size_t> fastestDistinct(const std::vector<CublasLtAlgo>& algos,
                                         const std::vector<std::size_t>& fastestFirst, std::size_t most) {
  std::vector<std::size_t> out;
  std::set<std::string> defaults;
  for (const std::size_t i : fastestFirst) {
    if (out.size() >= most) break;
    CublasLtAlgo base = algos.at(i);
    base.custom = 0;
    if (defaults.insert(base.name()).second) out.push_back(i);
  }
  return out;
}

}  // namespace gemmtune
