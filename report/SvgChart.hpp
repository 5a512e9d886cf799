// SvgChart: one XY chart as a standalone <svg> element — axes with ticks and grid, polylines,
// point markers with <title> tooltips, horizontal reference lines and a legend. It knows nothing
// about tuning: callers hand it numbers and already-chosen axis ranges.
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace gemmtune::report {

struct Tick {
  double value = 0;
  std::string label;
};

struct Axis {
  std::string title;
  double min = 0, max = 1;
  std::vector<Tick> ticks;
};

// About `count` ticks at 1/2/5 × 10^k steps covering [min, max]; labels get `suffix` appended.
std::vector<Tick> niceTicks(double min, double max, int count, const std::string& suffix = {});
// The upper end of a nice axis range that holds `max` (0 -> 1).
double niceCeil(double max);

struct DataPoint {
  double x = 0, y = 0;
  std::string tooltip;  // shown on hover; plain text, escaped by the chart
};

// A point whose y is NaN breaks the line there (a size the family was not measured at).
inline constexpr double kGap = std::numeric_limits<double>::quiet_NaN();

struct Series {
  std::string name;   // legend text, also the data-series attribute
  std::string color;  // CSS colour literal, e.g. "#1f77b4"
  std::vector<DataPoint> points;
  bool line = true;       // connect the points
  bool markers = true;    // draw a circle per point
  bool dashed = false;
  double opacity = 1.0;   // of the markers; < 1 lets overlapping scatter points show through
};

struct ReferenceLine {
  double y = 0;
  std::string name;     // legend text and data-ref attribute
  std::string label;    // drawn on the line, right-aligned
  std::string tooltip;  // explains where the number comes from
  std::string color;
  bool dashed = true;
};

class SvgChart {
 public:
  SvgChart(int width, int height, std::string title);

  // Long or many x labels are drawn slanted, with the bottom margin grown to hold them.
  void setXAxis(Axis axis);
  void setYAxis(Axis axis) { y_ = std::move(axis); }
  void add(Series series) { series_.push_back(std::move(series)); }
  void add(ReferenceLine line) { refs_.push_back(std::move(line)); }
  // Drawn under the plot, e.g. where a reference number comes from.
  void setCaption(std::string caption) { caption_ = std::move(caption); }

  std::string render() const;

 private:
  double px(double x) const;
  double py(double y) const;
  std::string renderAxes() const;  // grid, ticks, frame and axis titles
  std::string renderReference(const ReferenceLine& line) const;
  std::string renderSeries(const Series& series) const;
  std::string renderLegend() const;

  int width_, height_;
  std::string title_, caption_;
  Axis x_, y_;
  std::vector<Series> series_;
  std::vector<ReferenceLine> refs_;
  // Plot area inside the SVG: room on the left for y labels, on the right for the legend.
  double left_ = 72, right_ = 210, top_ = 44, bottom_ = 64;
  bool slantX_ = false;
};

}  // namespace gemmtune::report
