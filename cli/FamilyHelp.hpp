// FamilyHelp: family names and example configurations for --help texts, taken from the registry
// (the library's default family serves as the example), so help never names a family that is
// not built in and a new family appears without editing a help string.
#pragma once

#include <string>
#include <vector>

#include "FamilyRegistry.hpp"

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
  static const std::vector<std::string> names{"strict", "faithful"};
  return names;
}
inline PrecisionClass precisionNamed(const std::string& name) {
  return name == "faithful" ? PrecisionClass::faithful : PrecisionClass::strict;
}
inline const char* precisionName(PrecisionClass precision) {
  return precision == PrecisionClass::faithful ? "faithful" : "strict";
}

}  // namespace gemmtune::cli
