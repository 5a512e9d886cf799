// HtmlReport: assembles the self-contained report page from ReportData — header (GPU, runs,
// notes), the size chart, the best-configuration table, the heatmap and the occupancy scatter.
// Inline CSS and SVG only: the page fetches nothing, so it opens the same offline or archived.
#pragma once

#include <string>

#include "ReportData.hpp"

namespace gemmtune::report {

class HtmlReport {
 public:
  // `generatedAt` is printed in the footer; empty leaves the footer without a time.
  explicit HtmlReport(const ReportData& data, std::string generatedAt = {});

  std::string render() const;

  // The parts, each a complete fragment (an <svg> element or an HTML block).
  std::string header() const;
  std::string sizeChart() const;
  std::string bestTable() const;
  std::string heatmap() const;
  std::string occupancyChart() const;

 private:
  std::string familyColor(const std::string& family) const;

  const ReportData& d_;
  std::string generatedAt_;
};

}  // namespace gemmtune::report
