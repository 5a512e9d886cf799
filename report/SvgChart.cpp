#include "SvgChart.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "Markup.hpp"

namespace gemmtune::report {

std::vector<Tick> niceTicks(double min, double max, int count, const std::string& suffix) {
  std::vector<Tick> ticks;
  if (!(max > min) || count < 1) return ticks;
  double raw = (max - min) / count;
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  int decimals = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step)));
  for (double v = std::ceil(min / step) * step; v <= max + step * 1e-9; v += step)
    ticks.push_back({v, num(v, decimals) + suffix});
  return ticks;
}

double niceCeil(double max) {
  if (!(max > 0) || !std::isfinite(max)) return 1;
  double mag = std::pow(10.0, std::floor(std::log10(max)));
  for (double m : {1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0})
    if (m * mag >= max) return m * mag;
  return 10 * mag;
}

SvgChart::SvgChart(int width, int height, std::string title)
    : width_(width), height_(height), title_(std::move(title)) {}

void SvgChart::setXAxis(Axis axis) {
  x_ = std::move(axis);
  // About 7 px per character at 12 px: slant when neighbouring labels would touch.
  size_t longest = 0;
  for (const auto& t : x_.ticks) longest = std::max(longest, t.label.size());
  double room = x_.ticks.size() > 1 ? (width_ - left_ - right_) / static_cast<double>(x_.ticks.size()) : 1e9;
  slantX_ = longest * 7.0 + 8 > room;
  bottom_ = slantX_ ? 64 + longest * 7.0 * 0.5 : 64;
}

double SvgChart::px(double x) const {
  double span = x_.max - x_.min;
  double t = span > 0 ? (x - x_.min) / span : 0.5;
  return left_ + t * (width_ - left_ - right_);
}

double SvgChart::py(double y) const {
  double span = y_.max - y_.min;
  double t = span > 0 ? (y - y_.min) / span : 0.5;
  return height_ - bottom_ - t * (height_ - top_ - bottom_);
}

std::string SvgChart::render() const {
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" role=\"img\" aria-label=\"{2}\">\n<title>{2}</title>\n"
      "<rect x=\"0\" y=\"0\" width=\"{0}\" height=\"{1}\" fill=\"#ffffff\"/>\n"
      "<text class=\"chart-title\" x=\"{3}\" y=\"24\" font-size=\"16\" font-weight=\"600\">{2}</text>\n",
      width_, height_, escape(title_), num(left_));
  s += renderAxes();
  for (const auto& r : refs_) s += renderReference(r);
  for (const auto& ser : series_) s += renderSeries(ser);
  s += renderLegend();
  if (!caption_.empty())
    s += fmt::format("<text class=\"caption\" x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"#666666\">{}</text>\n",
                     num(left_), num(height_ - 6), escape(caption_));
  s += "</svg>\n";
  return s;
}

std::string SvgChart::renderAxes() const {
  double x0 = left_, x1 = width_ - right_, y0 = height_ - bottom_, y1 = top_;

  // Grid and y ticks.
  std::string s = "<g class=\"y-axis\" font-size=\"12\" fill=\"#444444\">\n";
  for (const auto& t : y_.ticks) {
    if (t.value < y_.min || t.value > y_.max) continue;
    double y = py(t.value);
    s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#e3e3e3\"/>\n", num(x0), num(y), num(x1),
                     num(y));
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" dominant-baseline=\"middle\">{}</text>\n",
                     num(x0 - 8), num(y), escape(t.label));
  }
  s += "</g>\n<g class=\"x-axis\" font-size=\"12\" fill=\"#444444\">\n";
  for (const auto& t : x_.ticks) {
    if (t.value < x_.min || t.value > x_.max) continue;
    double x = px(t.value);
    s += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#f0f0f0\"/>\n", num(x), num(y0),
                     num(y1));
    s += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#888888\"/>\n", num(x), num(y0),
                     num(y0 + 5));
    if (slantX_)
      s += fmt::format("<text x=\"{0}\" y=\"{1}\" text-anchor=\"end\" transform=\"rotate(-30 {0} {1})\">{2}</text>\n",
                       num(x + 4), num(y0 + 16), escape(t.label));
    else
      s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", num(x), num(y0 + 20),
                       escape(t.label));
  }
  s += "</g>\n";
  s += fmt::format(
      "<path class=\"frame\" d=\"M{0} {1} V{2} H{3}\" fill=\"none\" stroke=\"#888888\"/>\n"
      "<text class=\"axis-title\" x=\"{4}\" y=\"{5}\" text-anchor=\"middle\" font-size=\"13\">{6}</text>\n"
      "<text class=\"axis-title\" transform=\"translate(18 {7}) rotate(-90)\" text-anchor=\"middle\" "
      "font-size=\"13\">{8}</text>\n",
      num(x0), num(y1), num(y0), num(x1), num((x0 + x1) / 2), num(height_ - 22), escape(x_.title), num((y0 + y1) / 2),
      escape(y_.title));
  return s;
}

std::string SvgChart::renderReference(const ReferenceLine& r) const {
  double x0 = left_, x1 = width_ - right_;
  double y = py(std::clamp(r.y, y_.min, y_.max));
  std::string s = fmt::format("<g class=\"ref\" data-ref=\"{}\" data-value=\"{}\">\n<title>{}</title>\n",
                              escape(r.name), num(r.y, 3), escape(r.tooltip.empty() ? r.label : r.tooltip));
  s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2\"{}/>\n", num(x0),
                   num(y), num(x1), num(y), escape(r.color), r.dashed ? " stroke-dasharray=\"8 5\"" : "");
  s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"12\" fill=\"{}\">{}</text>\n</g>\n",
                   num(x1 - 4), num(y - 6), escape(r.color), escape(r.label));
  return s;
}

std::string SvgChart::renderSeries(const Series& ser) const {
  std::string s = fmt::format("<g class=\"series\" data-series=\"{}\">\n", escape(ser.name));
  if (ser.line) {
    // One polyline per unbroken run of points.
    std::string pts;
    auto flush = [&] {
      if (pts.find(' ') != std::string::npos)
        s += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2.5\"{}/>\n", pts,
                         escape(ser.color), ser.dashed ? " stroke-dasharray=\"7 4\"" : "");
      pts.clear();
    };
    for (const auto& p : ser.points) {
      if (std::isnan(p.y)) {
        flush();
        continue;
      }
      pts += fmt::format("{}{},{}", pts.empty() ? "" : " ", num(px(p.x)), num(py(p.y)));
    }
    flush();
  }
  if (ser.markers)
    for (const auto& p : ser.points) {
      if (std::isnan(p.y)) continue;
      s += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{}\" fill-opacity=\"{}\" stroke=\"#ffffff\" "
                       "stroke-width=\"1\" data-x=\"{}\" data-y=\"{}\"><title>{}</title></circle>\n",
                       num(px(p.x)), num(py(p.y)), ser.line ? 4.5 : 5, escape(ser.color), num(ser.opacity),
                       num(p.x, 4), num(p.y, 4), escape(p.tooltip));
    }
  return s + "</g>\n";
}

std::string SvgChart::renderLegend() const {
  std::string s = "<g class=\"legend\" font-size=\"12\">\n";
  double x = width_ - right_ + 20, y = top_ + 6;
  auto entry = [&](const std::string& name, const std::string& color, bool dashed, bool marker) {
    s += fmt::format("<g class=\"legend-entry\" data-legend=\"{}\">", escape(name));
    s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2.5\"{}/>", num(x),
                     num(y), num(x + 26), num(y), escape(color), dashed ? " stroke-dasharray=\"6 3\"" : "");
    if (marker)
      s += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"{}\"/>", num(x + 13), num(y), escape(color));
    s += fmt::format("<text x=\"{}\" y=\"{}\" dominant-baseline=\"middle\">{}</text></g>\n", num(x + 34), num(y),
                     escape(name));
    y += 22;
  };
  for (const auto& ser : series_) {
    if (ser.line)
      entry(ser.name, ser.color, ser.dashed, ser.markers);
    else {
      s += fmt::format("<g class=\"legend-entry\" data-legend=\"{}\"><circle cx=\"{}\" cy=\"{}\" r=\"5\" fill=\"{}\"/>"
                       "<text x=\"{}\" y=\"{}\" dominant-baseline=\"middle\">{}</text></g>\n",
                       escape(ser.name), num(x + 13), num(y), escape(ser.color), num(x + 34), num(y),
                       escape(ser.name));
      y += 22;
    }
  }
  for (const auto& r : refs_) entry(r.name, r.color, r.dashed, false);
  s += "</g>\n";
  return s;
}

}  // namespace gemmtune::report
