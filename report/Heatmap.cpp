#include "Heatmap.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "Markup.hpp"
#include "SvgChart.hpp"

namespace gemmtune::report {

std::string viridis(double t) {
  // Samples of matplotlib's viridis at t = 0, 0.125, ..., 1.
  static constexpr std::array<std::array<double, 3>, 9> kStops{{{68, 1, 84},
                                                                  {71, 44, 122},
                                                                  {59, 81, 139},
                                                                  {44, 113, 142},
                                                                  {33, 144, 141},
                                                                  {39, 173, 129},
                                                                  {92, 200, 99},
                                                                  {170, 220, 50},
                                                                  {253, 231, 37}}};
  t = std::isfinite(t) ? std::clamp(t, 0.0, 1.0) : 0.0;
  double pos = t * (kStops.size() - 1);
  size_t i = std::min(static_cast<size_t>(pos), kStops.size() - 2);
  double f = pos - i;
  auto channel = [&](int c) {
    return static_cast<int>(std::lround(kStops[i][c] + f * (kStops[i + 1][c] - kStops[i][c])));
  };
  return fmt::format("#{:02x}{:02x}{:02x}", channel(0), channel(1), channel(2));
}

Heatmap::Heatmap(std::string title, std::string rowAxis, std::string colAxis, std::vector<std::string> rowLabels,
                 std::vector<std::string> colLabels)
    : title_(std::move(title)),
      rowAxis_(std::move(rowAxis)),
      colAxis_(std::move(colAxis)),
      rows_(std::move(rowLabels)),
      cols_(std::move(colLabels)),
      cells_(rows_.size() * cols_.size()) {}

namespace {

// Fills for cells without a value: pruned candidates were skipped on purpose, the others failed.
const char* kPrunedFill = "#ececec";
const char* kFailedFill = "#f7dcdc";
const char* kEmptyFill = "#ffffff";

const char* statusFill(const std::string& status) {
  if (status.empty()) return kEmptyFill;
  return status.rfind("pruned", 0) == 0 ? kPrunedFill : kFailedFill;
}

// The drawing's geometry, in px: cells, the margins holding the labels, the legend's column.
constexpr double kCellW = 112, kCellH = 54, kLeft = 96, kTop = 74, kLegendW = 310;

std::vector<std::string> splitLines(const std::string& text) {
  std::vector<std::string> out;
  for (size_t from = 0; !text.empty() && from <= text.size();) {
    size_t nl = std::min(text.find('\n', from), text.size());
    out.push_back(text.substr(from, nl - from));
    from = nl + 1;
  }
  return out;
}

// "rejected:smem" on two lines so long reasons fit the cell.
std::string statusText(const std::string& status, double cx, double cy) {
  auto colon = status.find(':');
  std::string first = status.substr(0, colon), second = colon == std::string::npos ? "" : status.substr(colon + 1);
  const char* ink = status.rfind("pruned", 0) == 0 ? "#666666" : "#9b2c2c";
  std::string s = fmt::format("<text x=\"{0}\" y=\"{1}\" text-anchor=\"middle\" font-size=\"11\" fill=\"{2}\">"
                              "<tspan x=\"{0}\" dy=\"{3}\">{4}</tspan>",
                              num(cx), num(cy), ink, second.empty() ? "0.35em" : "-0.25em", escape(first));
  if (!second.empty())
    s += fmt::format("<tspan x=\"{}\" dy=\"1.2em\" font-weight=\"600\">{}</tspan>", num(cx), escape(second));
  return s + "</text>\n";
}

}  // namespace

// The range the colours span: the cells' values.
struct Heatmap::Scale {
  double lo = INFINITY, hi = -INFINITY;
  bool anyValue = false;

  explicit Scale(const std::vector<HeatCell>& cells) {
    for (const auto& c : cells)
      if (c.value) lo = std::min(lo, *c.value), hi = std::max(hi, *c.value);
    anyValue = lo <= hi;
    if (!anyValue) lo = 0, hi = 1;
    if (hi - lo < 1e-9) lo = hi > 0 ? 0 : hi - 1;  // one value: scale from zero so it shows as bright
  }
  double scaled(double v) const { return (v - lo) / (hi - lo); }
};

std::string Heatmap::render() const {
  double gridW = kCellW * std::max<size_t>(cols_.size(), 1), gridH = kCellH * std::max<size_t>(rows_.size(), 1);
  const std::vector<std::string> captionLines = splitLines(caption_);
  // The legend (colour bar and three swatches) needs about 250 px below the top of the grid; a
  // narrow grid still leaves room for the caption lines.
  int width = std::max(static_cast<int>(kLeft + gridW + kLegendW), 820);
  int height = static_cast<int>(kTop + std::max(gridH, 250.0) + 20 + 16 * captionLines.size());
  const Scale scale(cells_);

  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"heatmap\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" role=\"img\" aria-label=\"{2}\">\n<title>{2}</title>\n"
      "<rect x=\"0\" y=\"0\" width=\"{0}\" height=\"{1}\" fill=\"#ffffff\"/>\n"
      "<text class=\"chart-title\" x=\"{3}\" y=\"24\" font-size=\"16\" font-weight=\"600\">{2}</text>\n",
      width, height, escape(title_), num(kLeft));
  s += renderLabels(gridW, gridH);
  s += "<g class=\"cells\">\n";
  for (size_t r = 0; r < rows_.size(); ++r)
    for (size_t c = 0; c < cols_.size(); ++c) s += renderCell(r, c, scale);
  s += "</g>\n";
  s += renderLegend(kLeft + gridW + 36, scale);
  for (size_t i = 0; i < captionLines.size(); ++i)
    s += fmt::format("<text class=\"caption\" x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"#666666\">{}</text>\n",
                     num(kLeft), num(height - 8 - 16.0 * (captionLines.size() - 1 - i)), escape(captionLines[i]));
  s += "</svg>\n";
  return s;
}

std::string Heatmap::renderLabels(double gridW, double gridH) const {
  // Axis titles: columns above the grid, rows along its left edge.
  std::string s =
      fmt::format("<text class=\"axis-title\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"13\">{}</text>\n",
                  num(kLeft + gridW / 2), num(kTop - 30), escape(colAxis_));
  s += fmt::format("<text class=\"axis-title\" transform=\"translate(22 {}) rotate(-90)\" text-anchor=\"middle\" "
                   "font-size=\"13\">{}</text>\n",
                   num(kTop + gridH / 2), escape(rowAxis_));
  for (size_t c = 0; c < cols_.size(); ++c)
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"12\">{}</text>\n",
                     num(kLeft + (c + 0.5) * kCellW), num(kTop - 8), escape(cols_[c]));
  for (size_t r = 0; r < rows_.size(); ++r)
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" dominant-baseline=\"middle\" font-size=\"12\">{}"
                     "</text>\n",
                     num(kLeft - 10), num(kTop + (r + 0.5) * kCellH), escape(rows_[r]));
  return s;
}

std::string Heatmap::renderCell(size_t r, size_t c, const Scale& scale) const {
  const HeatCell& cell = cells_[r * cols_.size() + c];
  double x = kLeft + c * kCellW, y = kTop + r * kCellH;
  std::string fill = cell.value ? viridis(scale.scaled(*cell.value)) : statusFill(cell.status);
  std::string status = cell.value ? std::string("ok") : cell.status;
  std::string s =
      fmt::format("<g class=\"cell\" data-row=\"{}\" data-col=\"{}\" data-status=\"{}\"{}>\n<title>{}</title>\n",
                  escape(rows_[r]), escape(cols_[c]), escape(status.empty() ? "none" : status),
                  cell.value ? fmt::format(" data-value=\"{}\"", num(*cell.value, 3)) : std::string(),
                  escape(cell.tooltip));
  s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#ffffff\" "
                   "stroke-width=\"2\"{}/>\n",
                   num(x), num(y), num(kCellW), num(kCellH), fill, status.empty() ? " stroke-dasharray=\"3 3\"" : "");
  double cx = x + kCellW / 2, cy = y + kCellH / 2;
  if (cell.value) {
    const char* ink = scale.scaled(*cell.value) < 0.55 ? "#ffffff" : "#111111";
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" dominant-baseline=\"middle\" "
                     "font-size=\"14\" font-weight=\"600\" fill=\"{}\">{}</text>\n",
                     num(cx), num(cy), ink, escape(fixed(*cell.value, 1)));
  } else if (status.empty()) {
    s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#cccccc\" "
                     "stroke-dasharray=\"3 3\"/>\n<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" "
                     "dominant-baseline=\"middle\" font-size=\"11\" fill=\"#999999\">not measured</text>\n",
                     num(x + 2), num(y + 2), num(kCellW - 4), num(kCellH - 4), num(cx), num(cy));
  } else {
    s += statusText(status, cx, cy);
  }
  return s + "</g>\n";
}

// Legend: the colour scale, then the fills of cells without a value.
std::string Heatmap::renderLegend(double lx, const Scale& scale) const {
  const double ly = kTop, barH = 160, lo = scale.lo, hi = scale.hi;
  std::string grad = escape(idPrefix_ + "-scale");
  std::string s = fmt::format(
      "<g class=\"legend\" font-size=\"12\">\n<defs><linearGradient id=\"{}\" x1=\"0\" y1=\"1\" x2=\"0\" "
      "y2=\"0\">",
      grad);
  for (int i = 0; i <= 8; ++i)
    s += fmt::format("<stop offset=\"{}\" stop-color=\"{}\"/>", num(i / 8.0, 3), viridis(i / 8.0));
  s += "</linearGradient></defs>\n";
  s += fmt::format("<text x=\"{}\" y=\"{}\" font-weight=\"600\">{}</text>\n", num(lx), num(ly - 16), escape(valueName_));
  s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"18\" height=\"{}\" fill=\"url(#{})\" stroke=\"#888888\"/>\n",
                   num(lx), num(ly), num(barH), grad);
  if (scale.anyValue) {
    // The ends carry the exact extremes; round ticks in between only where they do not crowd them.
    std::vector<Tick> ticks{{lo, fixed(lo, 1)}, {hi, fixed(hi, 1)}};
    for (const auto& t : niceTicks(lo, hi, 4))
      if (t.value - lo > 0.12 * (hi - lo) && hi - t.value > 0.12 * (hi - lo)) ticks.push_back(t);
    for (const auto& t : ticks) {
      double ty = ly + barH - (t.value - lo) / (hi - lo) * barH;
      s += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#444444\"/><text x=\"{3}\" "
                       "y=\"{1}\" dominant-baseline=\"middle\">{4}</text>\n",
                       num(lx + 18), num(ty), num(lx + 23), num(lx + 27), escape(t.label));
    }
  }
  double sy = ly + barH + 26;
  auto swatch = [&](const char* fill, const std::string& text, bool dashed) {
    s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"18\" height=\"14\" fill=\"{}\" stroke=\"#aaaaaa\"{}/>"
                     "<text x=\"{}\" y=\"{}\" dominant-baseline=\"middle\">{}</text>\n",
                     num(lx), num(sy), fill, dashed ? " stroke-dasharray=\"3 2\"" : "", num(lx + 26), num(sy + 7),
                     escape(text));
    sy += 22;
  };
  swatch(kFailedFill, "no ok row: rejected or failed", false);
  swatch(kPrunedFill, "no ok row: pruned (not timed)", false);
  swatch(kEmptyFill, "not measured", true);
  return s + "</g>\n";
}

}  // namespace gemmtune::report
