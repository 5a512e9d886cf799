#include "SearchStrategy.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "Errors.hpp"
#include "Quote.hpp"

namespace gemmtune {

std::unique_ptr<SearchStrategy> makeModelSearch(const StrategyOptions& options);
std::unique_ptr<SearchStrategy> makeExhaustiveSearch();
std::unique_ptr<SearchStrategy> makeRandomSearch(const StrategyOptions& options);

namespace {

using Factory = std::unique_ptr<SearchStrategy> (*)(const StrategyOptions&);

// Every strategy once, the default first: names for --help and errors, factories for tune.
const std::vector<std::pair<std::string, Factory>>& strategies() {
  static const std::vector<std::pair<std::string, Factory>> all{
      {"model", makeModelSearch},
      {"exhaustive", [](const StrategyOptions&) { return makeExhaustiveSearch(); }},
      {"random", makeRandomSearch},
  };
  return all;
}

}  // namespace

const std::vector<std::string>& strategyNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& [name, make] : strategies()) out.push_back(name);
    return out;
  }();
  return names;
}

std::unique_ptr<SearchStrategy> makeStrategy(const std::string& name, const StrategyOptions& options) {
  for (const auto& [known, make] : strategies())
    if (known == name) return make(options);
  std::string choices;
  for (const auto& n : strategyNames()) choices += (choices.empty() ? "" : ", ") + n;
  throw UsageError(fmt::format("unknown search strategy {} (choose from: {})", quoteInput(name), choices));
}

int blocksToSaturate(int blocksPerSm, int warpsPerBlock) {
  if (blocksPerSm <= 0 || warpsPerBlock <= 0) return 0;
  return std::clamp((8 + warpsPerBlock - 1) / warpsPerBlock, 1, blocksPerSm);
}

double predictMs(double msFrom, const GemmShape& from, long long tilesFrom, const GemmShape& to, long long tilesTo,
                 int saturating, int smCount) {
  if (tilesFrom <= 0 || tilesTo <= 0 || saturating <= 0 || smCount <= 0 || from.K <= 0)
    return msFrom * to.flops() / std::max(1.0, from.flops());  // nothing known of the launch: scale by work
  const long long slots = static_cast<long long>(smCount) * saturating;
  auto waves = [&](long long tiles) { return static_cast<double>((tiles + slots - 1) / slots); };
  return msFrom * (static_cast<double>(to.K) / static_cast<double>(from.K)) * waves(tilesTo) / waves(tilesFrom);
}

}  // namespace gemmtune
