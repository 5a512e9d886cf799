#include "SizeSpec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <limits>

#include "GemmProblem.hpp"
#include "gemmtune/Errors.hpp"
#include "Quote.hpp"

namespace gemmtune {

namespace {

// Kernels take int dimensions and leading dimensions.
constexpr long long kMaxDim = std::numeric_limits<int>::max();

long long parseDim(std::string_view text, std::string_view item) {
  long long v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || p != text.data() + text.size())
    throw UsageError(fmt::format("bad size {}: {} is not a whole number (e.g. 4096, 1024..8192, 4096x1024x512)",
                                 quoteInput(item), quoteInput(text)));
  if (v < 1) throw UsageError(fmt::format("bad size {}: sizes must be at least 1", quoteInput(item)));
  if (v > kMaxDim) throw UsageError(fmt::format("bad size {}: {} exceeds the largest dimension {}", quoteInput(item), v, kMaxDim));
  return v;
}

// One dimension: 4096, a doubling range 1024..8192, or a stepped one 1000..4000:500.
std::vector<long long> parseDimList(std::string_view text, std::string_view item) {
  auto dots = text.find("..");
  if (dots == std::string_view::npos) return {parseDim(text, item)};
  std::string_view rest = text.substr(dots + 2);
  auto colon = rest.find(':');
  long long lo = parseDim(text.substr(0, dots), item);
  long long hi = parseDim(rest.substr(0, colon), item);
  if (lo > hi) throw UsageError(fmt::format("bad size range {}: start {} is above end {}", quoteInput(item), lo, hi));
  std::vector<long long> out;
  if (colon == std::string_view::npos) {
    for (long long n = lo; n <= hi; n *= 2) out.push_back(n);
    return out;
  }
  std::string_view stepText = rest.substr(colon + 1);
  long long step = 0;
  auto [p, ec] = std::from_chars(stepText.data(), stepText.data() + stepText.size(), step);
  if (stepText.empty() || ec != std::errc() || p != stepText.data() + stepText.size() || step < 1)
    throw UsageError(fmt::format("bad size range {}: the step must be a whole number of at least 1", quoteInput(item)));
  if ((hi - lo) / step >= 10000)
    throw UsageError(fmt::format("bad size range {}: more than 10000 sizes", quoteInput(item)));
  for (long long n = lo; n <= hi; n += step) out.push_back(n);
  return out;
}

void addItem(std::string_view item, std::vector<GemmShape>& out) {
  if (item.empty()) throw UsageError("bad size list: empty item (check for a stray comma)");
  auto x = item.find('x');
  if (x == std::string_view::npos) {  // square
    for (long long n : parseDimList(item, item)) out.push_back({n, n, n});
    return;
  }
  // MxNxK, each dimension a number or a range: 4096x1..4096x4096 is N = 1, 2, 4, ..., 4096.
  auto x2 = item.find('x', x + 1);
  if (x2 == std::string_view::npos || item.find('x', x2 + 1) != std::string_view::npos)
    throw UsageError(fmt::format("bad size {}: write a problem as MxNxK, e.g. 4096x1024x512 or 4096x1..4096x4096",
                                 quoteInput(item)));
  const auto ms = parseDimList(item.substr(0, x), item), ns = parseDimList(item.substr(x + 1, x2 - x - 1), item),
             ks = parseDimList(item.substr(x2 + 1), item);
  if (ms.size() * ns.size() * ks.size() > 10000)
    throw UsageError(fmt::format("bad size range {}: more than 10000 shapes", quoteInput(item)));
  for (long long m : ms)
    for (long long n : ns)
      for (long long k : ks) out.push_back({m, n, k});
}

}  // namespace

std::vector<GemmShape> parseSizes(std::string_view spec) {
  if (spec.empty()) throw UsageError("no sizes given (e.g. --sizes 1024..8192)");
  std::vector<GemmShape> all;
  size_t start = 0;
  while (true) {
    size_t comma = spec.find(',', start);
    addItem(spec.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start), all);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  std::vector<GemmShape> out;
  for (const auto& s : all)
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  return out;
}

Layout parseLayout(std::string_view text) {
  const auto layout = Layout::parse(text);
  if (!layout)
    throw UsageError(fmt::format("bad layout {}: write nn, nt, tn or tt (op(A) then op(B); t: stored transposed)",
                                 quoteInput(text)));
  return *layout;
}

std::vector<Layout> parseLayouts(std::string_view spec) {
  if (spec.empty()) throw UsageError("no layouts given (e.g. --layouts nn,tn)");
  std::vector<Layout> out;
  size_t start = 0;
  while (true) {
    const size_t comma = spec.find(',', start);
    const std::string_view item = spec.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (item.empty()) throw UsageError("bad layout list: empty item (check for a stray comma)");
    const Layout layout = parseLayout(item);
    if (std::find(out.begin(), out.end(), layout) == out.end()) out.push_back(layout);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

long long parseBatch(std::string_view text) {
  long long v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || p != text.data() + text.size() || (ec != std::errc() && ec != std::errc::result_out_of_range))
    throw UsageError(fmt::format("bad batch {}: not a whole number (e.g. 64)", quoteInput(text)));
  if (ec == std::errc::result_out_of_range || v > kMaxBatch)
    throw UsageError(fmt::format("bad batch {}: at most {} products per call", quoteInput(text), kMaxBatch));
  if (v < 1) throw UsageError(fmt::format("bad batch {}: a call computes at least 1 product", quoteInput(text)));
  return v;
}

std::vector<GemmShape> shapesFor(const std::vector<GemmShape>& sizes, const std::vector<Layout>& layouts,
                                 long long batch) {
  std::vector<GemmShape> out;
  for (const GemmShape& s : sizes)
    for (const Layout& layout : layouts) {
      const GemmShape shape{s.M, s.N, s.K, layout, batch};
      if (std::find(out.begin(), out.end(), shape) == out.end()) out.push_back(shape);
    }
  return out;
}

std::int64_t workingSetBytes(const GemmShape& s) {
  const GemmProblem p = GemmProblem::packed(s);
  const double a = double(p.rowsA()) * double(p.colsA()), b = double(p.rowsB()) * double(p.colsB()),
               c = double(s.M) * double(s.N);
  // Padded checks: each stored row rounded up and padded by up to 16 floats, and room between
  // batches (and around C) for guards: 4 KiB a matrix, well above the worker's 1 KiB guards.
  constexpr double kRowPad = 16, kGapFloats = 1024;
  const double padded = double(p.rowsA()) * (double(p.colsA()) + kRowPad) +
                        double(p.rowsB()) * (double(p.colsB()) + kRowPad) + double(s.M) * (double(s.N) + kRowPad) +
                        3 * kGapFloats;
  // A and B with two rotation copies each; C, the reference and |A||B| for verification.
  const double perProduct = 3.0 * (a + b) + 3.0 * c + padded;
  return static_cast<std::int64_t>(std::min(perProduct * double(s.batch) * 4.0, 9.0e18));
}

void checkFits(const std::vector<GemmShape>& shapes, std::int64_t deviceBytes, std::string_view gpuName) {
  for (const auto& s : shapes)
    if (workingSetBytes(s) > deviceBytes * 9 / 10)
      throw UsageError(fmt::format("size {} needs {:.1f} GiB of GPU memory to tune, more than {} has ({:.1f} GiB)",
                                   s.str(), workingSetBytes(s) / 1073741824.0, gpuName, deviceBytes / 1073741824.0));
}

}  // namespace gemmtune
