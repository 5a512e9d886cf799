#include "HtmlReport.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "FamilyRegistry.hpp"
#include "Heatmap.hpp"
#include "Markup.hpp"
#include "SvgChart.hpp"

namespace gemmtune::report {

namespace {

constexpr const char* kCublasColor = "#222222";
constexpr const char* kPeakColor = "#d62728";

constexpr const char* kStyle = R"(
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: #1a1a1a;
       margin: 24px auto; max-width: 1240px; padding: 0 16px; line-height: 1.4; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid #dddddd; padding-bottom: 4px; }
.sub { color: #555555; margin: 0 0 12px; }
.note { background: #fff8e1; border-left: 4px solid #f0b400; padding: 6px 10px; margin: 8px 0; }
table { border-collapse: collapse; font-size: 13px; margin: 8px 0; }
th, td { border-bottom: 1px solid #e5e5e5; padding: 4px 10px; text-align: left; vertical-align: top; }
th { background: #f5f5f5; font-weight: 600; }
td.nowrap { white-space: nowrap; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.winner td { font-weight: 600; }
code { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12px; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 5px; margin-right: 6px; }
svg { display: block; margin: 8px 0; max-width: 100%; height: auto; }
footer { color: #777777; font-size: 12px; margin-top: 32px; }
)";

std::string tflops(double gflops) { return fixed(gflops / 1000.0, 1); }

std::string percentOf(double value, std::optional<double> reference) {
  return reference && *reference > 0 ? fixed(100.0 * value / *reference, 0) + "%" : "-";
}

std::optional<double> lookup(const std::map<size_t, double>& m, size_t key) {
  auto it = m.find(key);
  return it == m.end() ? std::nullopt : std::optional<double>(it->second);
}

}  // namespace

HtmlReport::HtmlReport(const ReportData& data, std::string generatedAt)
    : d_(data), generatedAt_(std::move(generatedAt)) {}

std::string HtmlReport::familyColor(const std::string& family) const {
  static constexpr const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd",
                                             "#8c564b", "#e377c2", "#17becf", "#bcbd22"};
  auto it = std::find(d_.families.begin(), d_.families.end(), family);
  size_t i = it == d_.families.end() ? 0 : static_cast<size_t>(it - d_.families.begin());
  return kPalette[i % std::size(kPalette)];
}

std::string HtmlReport::header() const {
  const GpuSpec& g = d_.gpu;
  std::string s = fmt::format("<header>\n<h1>gemmtune report: {}</h1>\n", escape(g.name));
  s += fmt::format("<p class=\"sub\">{} · {} SMs · {} boost clock · {} GiB · GPU fingerprint <code>{}</code> · "
                   "database <code>{}</code></p>\n",
                   escape(g.arch()), g.smCount, g.clockKhz > 0 ? fixed(g.clockKhz / 1e6, 3) + " GHz" : "unknown",
                   fixed(g.totalMemBytes / 1073741824.0, 0), escape(d_.fingerprint.substr(0, 16)),
                   escape(d_.dbPath.string()));
  if (d_.staleRows) {
    std::vector<std::string> why;
    for (const auto& [reason, n] : d_.staleReasons) why.push_back(fmt::format("{} ({})", reason, n));
    s += fmt::format("<p class=\"note\" id=\"stale-note\">{} stale row{} excluded — measured under another build, "
                     "driver, template source, method or GPU fingerprint than the present one: {}. "
                     "<code>gemmtune tune</code> measures them again.</p>\n",
                     d_.staleRows, d_.staleRows == 1 ? "" : "s", escape(fmt::format("{}", fmt::join(why, "; "))));
  }
  if (!d_.otherGpus.empty())
    s += fmt::format("<p class=\"note\">The database also holds results for {}; choose with "
                     "<code>--gpu</code>.</p>\n",
                     escape(fmt::format("{}", fmt::join(d_.otherGpus, ", "))));
  if (!d_.peak)
    s += "<p class=\"note\">The stored GPU spec lacks the SM count or clock: no FP32 peak line.</p>\n";

  s += "<h2>Tuning runs</h2>\n<table class=\"runs\">\n<tr><th>run</th><th>started (UTC)</th><th>ended</th>"
       "<th>host</th><th>gemmtune</th><th>NVRTC</th><th>driver</th><th>current rows</th><th>command</th></tr>\n";
  for (const auto& r : d_.runs) {
    auto rows = d_.rowsPerRun.find(r.uid);
    s += fmt::format("<tr><td><code>{}</code></td><td class=\"nowrap\">{}</td><td class=\"nowrap\">{}</td><td>{}</td><td>{}</td><td>{}</td>"
                     "<td>{}</td><td class=\"num\">{}</td><td><code>{}</code></td></tr>\n",
                     escape(r.uid.substr(0, 8)), escape(r.startedAt), escape(r.endedAt.empty() ? "-" : r.endedAt),
                     escape(r.host), escape(r.toolVersion), escape(r.nvrtcVersion), r.driverVersion,
                     rows == d_.rowsPerRun.end() ? 0 : rows->second, escape(r.commandLine));
  }
  s += "</table>\n</header>\n";
  return s;
}

std::string HtmlReport::sizeChart() const {
  SvgChart chart(1180, 440, "Best TFLOP/s per size and family");
  double ymax = 0;
  std::vector<Tick> xt;
  for (size_t i = 0; i < d_.sizes.size(); ++i) xt.push_back({static_cast<double>(i), sizeLabel(d_.sizes[i])});
  // Sizes come grouped by layout and batch: no line joins one group's largest to the next's smallest.
  auto breakBefore = [&](Series& s, size_t i) {
    if (i > 0 && (d_.sizes[i].layout != d_.sizes[i - 1].layout || d_.sizes[i].batch != d_.sizes[i - 1].batch))
      s.points.push_back({i - 0.5, kGap, {}});
  };
  for (const auto& fam : d_.families) {
    Series s{fam, familyColor(fam), {}};
    for (size_t i = 0; i < d_.sizes.size(); ++i) {
      breakBefore(s, i);
      const MeasuredRow* b = d_.best(i, fam);
      if (!b) {
        s.points.push_back({static_cast<double>(i), kGap, {}});
        continue;
      }
      double t = *b->gflops / 1000.0;
      ymax = std::max(ymax, t);
      s.points.push_back({static_cast<double>(i), t,
                          fmt::format("{} at {}: {} TFLOP/s ({} of cuBLAS)\n{}", fam, sizeLabel(d_.sizes[i]),
                                      fixed(t, 2), percentOf(*b->gflops, lookup(d_.cublasGflops, i)), b->instance)});
    }
    chart.add(std::move(s));
  }
  if (!d_.cublasGflops.empty()) {
    Series s{"cuBLAS", kCublasColor, {}};
    s.dashed = true;
    for (size_t i = 0; i < d_.sizes.size(); ++i) {
      breakBefore(s, i);
      auto g = lookup(d_.cublasGflops, i);
      double t = g ? *g / 1000.0 : kGap;
      if (g) ymax = std::max(ymax, t);
      s.points.push_back(
          {static_cast<double>(i), t, g ? fmt::format("cuBLAS at {}: {} TFLOP/s", sizeLabel(d_.sizes[i]), fixed(t, 2))
                                        : std::string()});
    }
    chart.add(std::move(s));
  }
  if (d_.peak) {
    double p = d_.peak->tflops();
    ymax = std::max(ymax, p);
    std::string source = fmt::format(
        "FP32 peak = {} SMs × {} FP32 lanes × 2 FLOP/FMA × {} GHz boost clock (SM count and clock from the stored "
        "GPU spec of {})",
        d_.peak->smCount, d_.peak->lanesPerSm, fixed(d_.peak->clockGHz, 3), d_.gpu.name);
    chart.add(ReferenceLine{p, "FP32 peak", fmt::format("FP32 peak {} TFLOP/s", fixed(p, 1)), source, kPeakColor, true});
    chart.setCaption(source);
  }
  double top = niceCeil(ymax * 1.08);
  chart.setXAxis({"problem size (M = N = K unless given as MxNxK; then the layout unless nn, the batch unless 1)",
                  -0.5, d_.sizes.size() - 0.5, xt});
  chart.setYAxis({"TFLOP/s", 0, top, niceTicks(0, top, 6)});
  return chart.render();
}

std::string HtmlReport::bestTable() const {
  std::string s =
      "<table class=\"best\">\n<tr><th>size</th><th>family</th><th>best configuration</th><th>TFLOP/s</th>"
      "<th>cuBLAS TFLOP/s</th><th>% of cuBLAS</th><th>occupancy</th><th>registers</th></tr>\n";
  for (size_t i = 0; i < d_.sizes.size(); ++i) {
    auto cublas = lookup(d_.cublasGflops, i);
    const MeasuredRow* winner = nullptr;
    for (const auto& fam : d_.families)
      if (auto* b = d_.best(i, fam); b && (!winner || *b->gflops > *winner->gflops)) winner = b;
    for (const auto& fam : d_.families) {
      const MeasuredRow* b = d_.best(i, fam);
      if (!b) continue;
      s += fmt::format("<tr{}><td>{}</td><td><span class=\"swatch\" style=\"background:{}\"></span>{}</td>"
                       "<td><code>{}</code></td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                       "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n",
                       b == winner ? " class=\"winner\"" : "", escape(sizeLabel(d_.sizes[i])), familyColor(fam),
                       escape(fam), escape(b->instance), tflops(*b->gflops), cublas ? tflops(*cublas) : "-",
                       percentOf(*b->gflops, cublas),
                       b->occupancy ? fixed(*b->occupancy * 100, 0) + "%" : "-",
                       b->registers ? std::to_string(*b->registers) : "-");
    }
  }
  s += "</table>\n";
  return s;
}

std::string HtmlReport::heatmap() const {
  const Family& family = FamilyRegistry::builtin().get(d_.heatmapFamily);
  const ParamSpec& rowParam = family.params.at(0);
  const ParamSpec* colParam = family.params.size() > 1 ? &family.params[1] : nullptr;
  // Axis values: the default domain plus any value measured outside it.
  std::set<int> rowValues(rowParam.domain.begin(), rowParam.domain.end()), colValues;
  if (colParam) colValues.insert(colParam->domain.begin(), colParam->domain.end());
  std::vector<const MeasuredRow*> rows;
  for (const auto& r : d_.rows)
    if (r.family == d_.heatmapFamily && r.size == d_.chosenSize) {
      rows.push_back(&r);
      rowValues.insert(r.config[rowParam.name]);
      if (colParam) colValues.insert(r.config[colParam->name]);
    }
  if (!colParam) colValues.insert(0);
  std::vector<int> rv(rowValues.begin(), rowValues.end()), cv(colValues.begin(), colValues.end());
  std::vector<std::string> rl, cl;
  for (int v : rv) rl.push_back(std::to_string(v));
  for (int v : cv) cl.push_back(colParam ? std::to_string(v) : "all");

  std::string others;
  for (size_t i = colParam ? 2 : 1; i < family.params.size(); ++i)
    others += (others.empty() ? "" : ", ") + family.params[i].name;
  std::string title = fmt::format("{} at {}: {}{}{}", d_.heatmapFamily, sizeLabel(d_.sizes[d_.chosenSize]),
                                  rowParam.name, colParam ? " × " + colParam->name : std::string(),
                                  others.empty() ? "" : fmt::format(" (best over {})", others));
  Heatmap map(title, rowParam.name, colParam ? colParam->name : std::string(), rl, cl);
  map.setValueName("best TFLOP/s");
  map.setIdPrefix("heat-" + d_.heatmapFamily);
  for (size_t r = 0; r < rv.size(); ++r)
    for (size_t c = 0; c < cv.size(); ++c) {
      const MeasuredRow* best = nullptr;
      std::map<std::string, size_t> statuses;
      for (const auto* row : rows) {
        if (row->config[rowParam.name] != rv[r] || (colParam && row->config[colParam->name] != cv[c])) continue;
        ++statuses[row->status];
        if (row->ok() && (!best || *row->gflops > *best->gflops)) best = row;
      }
      HeatCell& cell = map.at(r, c);
      std::string where = colParam ? fmt::format("{}={} {}={}", rowParam.name, rv[r], colParam->name, cv[c])
                                   : fmt::format("{}={}", rowParam.name, rv[r]);
      std::string counts;
      for (const auto& [status, n] : statuses) counts += fmt::format("\n{} × {}", n, status);
      if (best) {
        cell.value = *best->gflops / 1000.0;
        cell.status = "ok";
        cell.tooltip = fmt::format("{}: {} TFLOP/s\nbest: {}{}", where, fixed(*cell.value, 2), best->instance, counts);
      } else if (!statuses.empty()) {
        // The most frequent status explains the cell; ties go to the first in name order.
        auto dominant = std::max_element(statuses.begin(), statuses.end(),
                                         [](auto& a, auto& b) { return a.second < b.second; });
        cell.status = dominant->first;
        cell.tooltip = fmt::format("{}: no ok row{}", where, counts);
      } else {
        cell.tooltip = fmt::format("{}: not measured at this size", where);
      }
    }
  std::string meanings;
  for (const auto& p : family.params) meanings += p.name + ": " + p.meaning + "\n";
  map.setCaption(fmt::format("{}{} rows of {} at {}; change with --family and --size. Hover a cell for its rows.",
                             meanings, rows.size(), d_.heatmapFamily, sizeLabel(d_.sizes[d_.chosenSize])));
  return map.render();
}

std::string HtmlReport::occupancyChart() const {
  SvgChart chart(1180, 440,
                 fmt::format("Occupancy vs TFLOP/s at {} (one point per ok row)", sizeLabel(d_.sizes[d_.chosenSize])));
  double ymax = 0;
  size_t points = 0;
  for (const auto& fam : d_.families) {
    Series s{fam, familyColor(fam), {}};
    s.line = false;
    s.opacity = 0.75;
    for (const auto& r : d_.rows) {
      if (r.family != fam || r.size != d_.chosenSize || !r.ok() || !r.occupancy) continue;
      double t = *r.gflops / 1000.0;
      ymax = std::max(ymax, t);
      s.points.push_back({*r.occupancy * 100, t,
                          fmt::format("{}\n{} TFLOP/s, occupancy {}%{}{}", r.instance, fixed(t, 2),
                                      fixed(*r.occupancy * 100, 0),
                                      r.limiter.empty() ? "" : " (limited by " + r.limiter + ")",
                                      r.registers ? fmt::format(", {} registers", *r.registers) : "")});
    }
    points += s.points.size();
    if (!s.points.empty()) chart.add(std::move(s));
  }
  double top = niceCeil(ymax * 1.08);
  chart.setXAxis({"occupancy (active warps / maximum warps per SM)", 0, 100, niceTicks(0, 100, 10, "%")});
  chart.setYAxis({"TFLOP/s", 0, top, niceTicks(0, top, 6)});
  chart.setCaption(points ? fmt::format("{} ok rows with a recorded occupancy", points)
                          : std::string("no ok rows with a recorded occupancy at this size"));
  return chart.render();
}

std::string HtmlReport::render() const {
  std::string s = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n";
  s += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n";
  s += fmt::format("<title>gemmtune report: {}</title>\n<style>{}</style>\n</head>\n<body>\n", escape(d_.gpu.name),
                   kStyle);
  s += header();
  s += "<h2 id=\"sizes\">Best TFLOP/s vs size</h2>\n" + sizeChart();
  s += "<h2 id=\"best\">Best configuration per size and family</h2>\n" + bestTable();
  s += fmt::format("<h2 id=\"space\">Parameter space of {}</h2>\n", escape(d_.heatmapFamily)) + heatmap();
  s += "<h2 id=\"occupancy\">Occupancy vs TFLOP/s</h2>\n" + occupancyChart();
  s += fmt::format("<footer>Generated by gemmtune {}{} from {} current rows.</footer>\n</body>\n</html>\n",
                   GEMMTUNE_VERSION, generatedAt_.empty() ? "" : " at " + escape(generatedAt_), d_.rows.size());
  return s;
}

}  // namespace gemmtune::report
