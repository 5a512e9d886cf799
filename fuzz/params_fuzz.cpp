// Fuzz target: instance names and --params (generator/FamilyRegistry). Input: the first line is
// tried as an instance name, the rest as NAME=VALUE lists for every family. An accepted
// configuration names itself canonically, re-parses to itself, and its resources compute without
// overflow (UBSan reports signed overflow in the specs' arithmetic).
#include <string>
#include <string_view>

#include "gemmtune/Errors.hpp"
#include "FamilyRegistry.hpp"
#include "FuzzTarget.hpp"

namespace {

void checkAccepted(const gemmtune::FamilyRegistry& reg, const gemmtune::Config& c) {
  using gemmtune::fuzz::require;
  require(reg.parseName(c.name()) == c, "a configuration's name parses back to it");
  for (std::size_t i = 0; i < c.values.size(); ++i)
    require(c.values[i] >= 1 && c.values[i] <= c.family->params[i].maxValue(), "values stay within their bounds");
  require(c.family->threadsPerBlock(c) >= 0, "threads per block is not negative");
  require(c.family->staticSmemBytes(c) >= 0 && c.family->dynamicSmemBytes(c) >= 0, "shared memory is not negative");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto& reg = gemmtune::FamilyRegistry::builtin();
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto newline = text.find('\n');
  std::string_view name = text.substr(0, newline);
  std::string_view params = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
  try {
    checkAccepted(reg, reg.parseName(name));
  } catch (const gemmtune::UsageError&) {
  }
  for (const auto& family : reg.all()) {
    for (bool guarded : {false, true}) {
      try {
        checkAccepted(reg, reg.parseParams(family, params, guarded));
      } catch (const gemmtune::UsageError&) {
      }
    }
  }
  return 0;
}
