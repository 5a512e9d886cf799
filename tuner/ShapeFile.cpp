#include "ShapeFile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

#include "gemmtune/Errors.hpp"

namespace gemmtune {

namespace {

constexpr size_t kMaxLineBytes = 1000;    // a problem and a weight fit in far less
constexpr size_t kMaxShapes = 100000;      // more than any workload tunes; keeps a bad file cheap

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

// A line's text for an error message: printable, and short.
std::string shown(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 60)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return s.size() > 60 ? out + "..." : out;
}

double parseWeight(std::string_view token, std::string_view where) {
  double w = 0;
  auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), w);
  if (ec != std::errc() || end != token.data() + token.size() || !std::isfinite(w) || w <= 0)
    throw UsageError(fmt::format("{}: weight '{}' is not a positive number", where, shown(token)));
  return w;
}

}  // namespace

std::vector<WorkloadShape> parseShapeText(std::string_view text, std::string_view name) {
  std::vector<WorkloadShape> out;
  int lineNo = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++lineNo;
    const std::string where = fmt::format("{}:{}", name, lineNo);
    if (line.size() > kMaxLineBytes) throw UsageError(fmt::format("{}: line longer than {} bytes", where, kMaxLineBytes));
    if (auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    line = trim(line);
    if (line.empty()) continue;
    const size_t gap = line.find_first_of(" \t");
    const std::string_view problem = line.substr(0, gap);
    const std::string_view rest = gap == std::string_view::npos ? std::string_view{} : trim(line.substr(gap));
    if (rest.find_first_of(" \t") != std::string_view::npos)
      throw UsageError(fmt::format("{}: '{}' has more than a problem and a weight", where, shown(line)));
    if (problem.find_first_of(",.:") != std::string_view::npos)
      throw UsageError(fmt::format("{}: '{}' is not one problem (write MxNxK or N, one per line)", where, shown(problem)));
    std::vector<GemmShape> shapes;
    try {
      shapes = parseSizes(problem);
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("{}: {}", where, e.what()));
    }
    const double weight = rest.empty() ? 1 : parseWeight(rest, where);
    auto same = std::find_if(out.begin(), out.end(), [&](const WorkloadShape& w) { return w.shape == shapes.front(); });
    if (same != out.end()) {
      same->weight += weight;
      continue;
    }
    if (out.size() == kMaxShapes) throw UsageError(fmt::format("{}: more than {} shapes", where, kMaxShapes));
    out.push_back({shapes.front(), weight, lineNo});
  }
  if (out.empty()) throw UsageError(fmt::format("{}: no shapes (one MxNxK per line)", name));
  return out;
}

std::vector<WorkloadShape> readShapeFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(fmt::format("cannot read the shapes file {}", path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw IoError(fmt::format("cannot read the shapes file {}", path.string()));
  return parseShapeText(text.str(), path.string());
}

}  // namespace gemmtune
