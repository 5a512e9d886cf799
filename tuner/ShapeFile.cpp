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
  if (ec != std::errc() || end != token.data() + token.size())
    throw UsageError(fmt::format("{}: '{}' is neither a layout (nn, nt, tn, tt), batch=N nor a weight (a number)",
                                 where, shown(token)));
  if (!std::isfinite(w) || w <= 0)
    throw UsageError(fmt::format("{}: weight '{}' is not a positive number", where, shown(token)));
  return w;
}

// The words of a line, split at blanks.
std::vector<std::string_view> wordsOf(std::string_view line) {
  std::vector<std::string_view> out;
  for (size_t i = 0; i < line.size();) {
    const size_t from = line.find_first_not_of(" \t", i);
    if (from == std::string_view::npos) break;
    const size_t to = std::min(line.find_first_of(" \t", from), line.size());
    out.push_back(line.substr(from, to - from));
    i = to;
  }
  return out;
}

bool isBatchWord(std::string_view word) { return word.substr(0, 5) == "batch"; }

// One line's problem; `line` is trimmed, comment-free and not empty.
WorkloadShape parseLine(std::string_view line, std::string_view where) {
  const std::vector<std::string_view> words = wordsOf(line);
  const std::string_view problem = words.front();
  if (problem.find_first_of(",.:") != std::string_view::npos)
    throw UsageError(fmt::format("{}: '{}' is not one problem (write MxNxK or N, one per line)", where, shown(problem)));
  WorkloadShape out;
  try {
    out.shape = parseSizes(problem).front();
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{}: {}", where, e.what()));
  }
  size_t i = 1;
  if (i < words.size() && Layout::parse(words[i])) out.shape.layout = *Layout::parse(words[i++]);
  if (i < words.size() && isBatchWord(words[i])) {
    if (words[i].substr(0, 6) != "batch=")
      throw UsageError(fmt::format("{}: write the batch as batch=N, e.g. '512 nt batch=64'", where));
    try {
      out.shape.batch = parseBatch(words[i++].substr(6));
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("{}: {}", where, e.what()));
    }
  }
  if (i < words.size() && (Layout::parse(words[i]) || isBatchWord(words[i])))
    throw UsageError(fmt::format("{}: '{}' is out of order (write SIZE [LAYOUT] [batch=N] [WEIGHT])", where, shown(line)));
  if (i < words.size()) out.weight = parseWeight(words[i++], where);
  if (i < words.size())
    throw UsageError(fmt::format("{}: '{}' has more than a problem, a layout, a batch and a weight", where, shown(line)));
  return out;
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
    WorkloadShape shape = parseLine(line, where);
    auto same = std::find_if(out.begin(), out.end(), [&](const WorkloadShape& w) { return w.shape == shape.shape; });
    if (same != out.end()) {
      same->weight += shape.weight;
      continue;
    }
    if (out.size() == kMaxShapes) throw UsageError(fmt::format("{}: more than {} shapes", where, kMaxShapes));
    shape.line = lineNo;
    out.push_back(shape);
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
