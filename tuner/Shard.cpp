#include "Shard.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <numeric>

#include "gemmtune/Errors.hpp"
#include "FamilyRegistry.hpp"
#include "Quote.hpp"

namespace gemmtune {

namespace {

constexpr int kMaxShards = 4096;

bool parseInt(std::string_view s, int& out) {
  if (s.empty() || s.size() > 6) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

// Configurations of `family` that pass its static constraints: what a size of it costs to screen.
double configurationsOf(const Family& family) {
  double n = 0;
  for (const Config& c : FamilyRegistry::enumerate(family, true)) n += c.violated() == nullptr;
  return std::max(1.0, n);
}

}  // namespace

std::string ShardSpec::str() const { return fmt::format("{}/{}", index, count); }

ShardSpec parseShard(std::string_view text) {
  const size_t slash = text.find('/');
  ShardSpec s;
  if (slash == std::string_view::npos || !parseInt(text.substr(0, slash), s.index) ||
      !parseInt(text.substr(slash + 1), s.count) || s.count < 1 || s.count > kMaxShards || s.index < 0 ||
      s.index >= s.count)
    throw UsageError(fmt::format("bad --shard {}: give I/N with 0 <= I < N <= {} (e.g. --shard 0/4, or "
                                 "$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT)",
                                 quoteInput(std::string(text)), kMaxShards));
  return s;
}

std::vector<WorkUnit> workUnits(const std::vector<GemmShape>& sizes, const std::vector<const Family*>& families) {
  std::vector<double> configs;
  for (const Family* f : families) configs.push_back(configurationsOf(*f));
  std::vector<WorkUnit> out;
  for (const GemmShape& s : sizes)
    for (size_t i = 0; i < families.size(); ++i) out.push_back({s, families[i], configs[i] * (1 + s.flops() / 1e11)});
  return out;
}

std::vector<int> assignShards(const std::vector<WorkUnit>& units, int count) {
  std::vector<size_t> order(units.size());
  std::iota(order.begin(), order.end(), size_t{0});
  // Stable: equal costs keep command-line order, so every shard sorts identically.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return units[a].cost > units[b].cost; });
  std::vector<double> load(static_cast<size_t>(count), 0.0);
  std::vector<int> shardOf(units.size(), 0);
  for (size_t u : order) {
    const size_t lightest = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    shardOf[u] = static_cast<int>(lightest);
    load[lightest] += units[u].cost;
  }
  return shardOf;
}

std::vector<WorkUnit> unitsOf(const std::vector<WorkUnit>& units, const ShardSpec& shard) {
  const std::vector<int> shardOf = assignShards(units, shard.count);
  std::vector<WorkUnit> out;
  for (size_t i = 0; i < units.size(); ++i)
    if (shardOf[i] == shard.index) out.push_back(units[i]);
  return out;
}

}  // namespace gemmtune
