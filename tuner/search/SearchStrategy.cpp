#include "SearchStrategy.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "gemmtune/Errors.hpp"
#include "Quote.hpp"

namespace gemmtune {

std::unique_ptr<SearchStrategy> makeModelSearch(const StrategyOptions& options);
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

}  // namespace gemmtune
