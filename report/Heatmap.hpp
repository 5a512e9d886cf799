// Heatmap: a grid of cells coloured by value on a sequential scale, with a colour legend. Cells
// without a value carry a short status instead (why nothing was measured there), drawn on a
// neutral fill so they never read as "slow".
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gemmtune::report {

struct HeatCell {
  std::optional<double> value;  // colours the cell when present
  // "ok" with a value; otherwise the reason shown in the cell ("rejected:smem"); empty: nothing
  // was measured there.
  std::string status;
  std::string tooltip;  // plain text, escaped by the heatmap
};

// Perceptually ordered dark-to-light colour (viridis) for t in [0, 1], as "#rrggbb".
std::string viridis(double t);

class Heatmap {
 public:
  // Row labels run top to bottom, column labels left to right.
  Heatmap(std::string title, std::string rowAxis, std::string colAxis, std::vector<std::string> rowLabels,
          std::vector<std::string> colLabels);

  HeatCell& at(size_t row, size_t col) { return cells_.at(row * cols_.size() + col); }
  void setValueName(std::string name) { valueName_ = std::move(name); }
  // Element ids in the page must be unique; the prefix keeps the gradient's id apart.
  void setIdPrefix(std::string prefix) { idPrefix_ = std::move(prefix); }
  // Under the grid; '\n' starts another line.
  void setCaption(std::string caption) { caption_ = std::move(caption); }

  std::string render() const;

 private:
  struct Scale;  // the value range the colours span
  std::string renderLabels(double gridW, double gridH) const;
  std::string renderCell(size_t row, size_t col, const Scale& scale) const;
  std::string renderLegend(double x, const Scale& scale) const;

  std::string title_, rowAxis_, colAxis_, valueName_ = "value", idPrefix_ = "heat", caption_;
  std::vector<std::string> rows_, cols_;
  std::vector<HeatCell> cells_;
};

}  // namespace gemmtune::report
