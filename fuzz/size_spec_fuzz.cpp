// Fuzz target: the --sizes grammar (tuner/SizeSpec). Every accepted size is a positive int
// dimension and a spec of n bytes never yields more than 10000 sizes per item. The same bytes as
// --layouts give distinct layouts, and as --batch a count within its bounds that prints back.
#include <limits>
#include <string>

#include "gemmtune/Errors.hpp"
#include "FuzzTarget.hpp"
#include "SizeSpec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using gemmtune::fuzz::require;
  const std::string spec(reinterpret_cast<const char*>(data), size);
  try {
    for (const auto& s : gemmtune::parseSizes(spec)) {
      for (long long d : {s.M, s.N, s.K})
        require(d >= 1 && d <= std::numeric_limits<int>::max(), "a parsed dimension is a positive int");
      require(gemmtune::parseSizes(s.str()).front() == s, "a size's text parses back to it");
    }
  } catch (const gemmtune::UsageError&) {
  }
  try {
    const auto layouts = gemmtune::parseLayouts(spec);
    for (size_t i = 0; i < layouts.size(); ++i)
      for (size_t j = 0; j < i; ++j) require(!(layouts[i] == layouts[j]), "each layout once");
    require(layouts.size() <= 4, "at most the four layouts");
  } catch (const gemmtune::UsageError&) {
  }
  try {
    const long long batch = gemmtune::parseBatch(spec);
    require(batch >= 1 && batch <= gemmtune::kMaxBatch, "a batch is within its bounds");
    require(gemmtune::parseBatch(std::to_string(batch)) == batch, "a batch's text parses back to it");
  } catch (const gemmtune::UsageError&) {
  }
  return 0;
}
