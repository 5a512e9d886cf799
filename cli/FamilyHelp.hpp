// FamilyHelp: family names and example configurations for --help texts, taken from the registry
// (the library's default family serves as the example), so help never names a family that is
// not built in and a new family appears without editing a help string.
#pragma once

#include <string>
#include <vector>

#include <fmt/format.h>

#include "FamilyRegistry.hpp"
#include "gemmtune/Errors.hpp"

namespace gemmtune::cli {

inline std::string familyChoices() { return FamilyRegistry::builtin().choices(); }

inline Config exampleConfig() {
  Config c = FamilyRegistry::builtin().libraryDefault();
  c.guarded = false;
  return c;
}

inline std::string exampleFamily() { return exampleConfig().family->name; }

// "BM=64,BN=64,BK=8,TM=8"
inline std::string exampleParams() {
  std::string out;
  for (const auto& [name, value] : exampleConfig().namedValues())
    out += (out.empty() ? "" : ",") + name + "=" + std::to_string(value);
  return out;
}

// "BM=64" (the first parameter only, for --params examples that fix part of a space)
inline std::string exampleFirstParam() {
  const auto values = exampleConfig().namedValues();  // owned: front() must not outlive it
  return values.front().first + "=" + std::to_string(values.front().second);
}

// --precision's names (CLI11 checks them), in PrecisionClass order.
inline const std::vector<std::string>& precisionNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (PrecisionClass p : kPrecisionClasses) out.push_back(precisionName(p));
    return out;
  }();
  return names;
}
// --precision's value (already checked against precisionNames()).
inline PrecisionClass precisionOption(const std::string& name) {
  return precisionNamed(name).value_or(PrecisionClass::strict);
}

// A family above the class a command was given would never be tuned or served: say what to add.
inline void requirePrecision(const Family& family, PrecisionClass allowed) {
  if (family.precision > allowed)
    throw UsageError(fmt::format("family {} computes on tensor cores (precision class {}): add --precision {}",
                                 family.name, precisionName(family.precision), precisionName(family.precision)));
}

}  // namespace gemmtune::cli
