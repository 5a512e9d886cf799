#include "CompileUnit.hpp"

#include "CompileResult.hpp"
#include "Sha256.hpp"

namespace gemmtune {

std::string CompileUnit::sourceHash() const {
  if (headers.empty() && headerTrees.empty()) return Sha256::of(source);
  std::string all = source;
  for (const auto& [name, text] : headers) all += "\n// header " + name + " " + std::to_string(text.size()) + "\n" + text;
  for (const auto& tree : headerTrees) all += "\n// header tree " + tree + "\n";
  return Sha256::of(all);
}

std::string joinLoweredNames(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : " ") + n;
  return out;
}

std::vector<std::string> splitLoweredNames(const std::string& joined) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < joined.size()) {
    size_t end = joined.find(' ', start);
    if (end == std::string::npos) end = joined.size();
    if (end > start) out.push_back(joined.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace gemmtune
