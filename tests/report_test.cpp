// The HTML report: escaping, the SVG building blocks, the data the page is drawn from, and the
// page of a fixture database — well-formed, self-contained, with the expected series and cells.
// Run: ctest -R report   (GEMMTUNE_REPORT_HTML=/tmp/report.html keeps the fixture page,
// GEMMTUNE_REPORT_DB=/tmp/fixture.db its database)
#include <cstdlib>
#include <regex>

#include "PresentEnvironment.hpp"
#include "Heatmap.hpp"
#include "HtmlReport.hpp"
#include "Markup.hpp"
#include "ReportData.hpp"
#include "SpeedBound.hpp"
#include "SvgChart.hpp"
#include "report_test_support.hpp"
#include "ExitCodes.hpp"

using namespace gemmtune;
using namespace gemmtune::report;
using gemmtune::test::ScratchDir;

namespace {

size_t count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// The attributes of the heatmap cell at row/col, e.g. data-status and data-value.
std::string cellTag(const std::string& page, const std::string& row, const std::string& col) {
  std::string key = "<g class=\"cell\" data-row=\"" + row + "\" data-col=\"" + col + "\"";
  size_t at = page.find(key);
  if (at == std::string::npos) return {};
  return page.substr(at, page.find('>', at) - at + 1);
}

void expectWellFormed(const std::string& page) {
  EXPECT_EQ(test::xmlProblem(page), "") << "the page";
  auto svgs = test::svgFragments(page);
  EXPECT_EQ(svgs.size(), 3u);
  for (const auto& svg : svgs) EXPECT_EQ(test::xmlProblem(svg), "") << svg.substr(0, 200);
}

void expectSelfContained(const std::string& page) {
  std::string rest = std::regex_replace(page, std::regex("xmlns=\"http://www\\.w3\\.org/2000/svg\""), "");
  EXPECT_FALSE(contains(rest, "http://"));
  EXPECT_FALSE(contains(rest, "https://"));
  EXPECT_FALSE(contains(rest, "<script"));
  EXPECT_FALSE(contains(rest, "<link"));
  EXPECT_FALSE(contains(rest, "@import"));
  EXPECT_FALSE(contains(rest, "url(") && !contains(rest, "url(#"));
  std::smatch m;
  std::string::const_iterator from = rest.cbegin();
  while (std::regex_search(from, rest.cend(), m, std::regex("url\\(([^)]*)\\)"))) {
    EXPECT_EQ(m[1].str().substr(0, 1), "#") << "only references inside the page: " << m[0];
    from = m.suffix().first;
  }
}

struct ReportFixture : ::testing::Test {
  ScratchDir dir;
  std::filesystem::path path = dir / "tune.db";

  ReportData load(const ReportQuery& q = {}) {
    db::Database database(path, {db::OpenMode::ReadOnly, db::OpenCheck::Quick});
    db::SqliteStore store(database);
    return loadReportData(store, path, q, serving::presentEnvironment());
  }
};

}  // namespace

TEST(reportMarkup, EscapesMarkupQuotesAndBadBytes) {
  EXPECT_EQ(escape("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;");
  EXPECT_EQ(escape("H100 \xC3\x97 2"), "H100 \xC3\x97 2");          // valid UTF-8 kept
  EXPECT_EQ(escape("a\xFF" "b"), "a\xEF\xBF\xBD" "b");                // invalid byte replaced
  EXPECT_EQ(escape(std::string("a\0b\x01", 4)), "a\xEF\xBF\xBD" "b\xEF\xBF\xBD");  // XML-illegal controls
  EXPECT_EQ(escape("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");          // overlong '/'
  EXPECT_EQ(num(12.50), "12.5");
  EXPECT_EQ(num(3.0), "3");
  EXPECT_EQ(num(std::nan("")), "0");
  EXPECT_EQ(fixed(23.456, 1), "23.5");
}

TEST(reportSvg, TicksAreRoundAndCoverTheRange) {
  auto t = niceTicks(0, 60, 6);
  ASSERT_FALSE(t.empty());
  EXPECT_EQ(t.front().label, "0");
  EXPECT_EQ(t.back().label, "60");
  EXPECT_EQ(t[1].label, "10");
  EXPECT_EQ(niceTicks(0, 100, 10, "%")[2].label, "20%");
  EXPECT_DOUBLE_EQ(niceCeil(66.9), 80);
  EXPECT_DOUBLE_EQ(niceCeil(0), 1);
}

TEST(reportSvg, ChartIsWellFormedAndNamesItsSeries) {
  SvgChart chart(600, 300, "Speed <by> size");
  chart.setXAxis({"size", -0.5, 1.5, {{0, "1024"}, {1, "2048"}}});
  chart.setYAxis({"TFLOP/s", 0, 60, niceTicks(0, 60, 6)});
  chart.add(Series{"fam\"ily", "#1f77b4", {{0, 10, "a < b"}, {1, kGap, ""}}});
  chart.add(ReferenceLine{55, "peak", "peak 55", "from the spec", "#d62728", true});
  std::string svg = chart.render();
  EXPECT_EQ(test::xmlProblem(svg), "") << svg;
  EXPECT_TRUE(contains(svg, "data-series=\"fam&quot;ily\""));
  EXPECT_TRUE(contains(svg, "<title>a &lt; b</title>"));
  EXPECT_TRUE(contains(svg, "data-ref=\"peak\""));
  EXPECT_TRUE(contains(svg, "Speed &lt;by&gt; size"));
  EXPECT_EQ(count(svg, "<circle"), 2u) << "one marker (a gap has none) and the legend's";
}

TEST(reportSvg, CrowdedXLabelsAreSlanted) {
  Axis few{"size", -0.5, 1.5, {{0, "1024"}, {1, "2048"}}}, many{"size", -0.5, 19.5, {}};
  for (int i = 0; i < 20; ++i) many.ticks.push_back({static_cast<double>(i), "4096x1024x512"});
  SvgChart a(1180, 440, "a"), b(1180, 440, "b");
  a.setXAxis(few);
  b.setXAxis(many);
  EXPECT_FALSE(contains(a.render(), "rotate(-30"));
  std::string svg = b.render();
  EXPECT_TRUE(contains(svg, "rotate(-30"));
  EXPECT_EQ(test::xmlProblem(svg), "");
}

TEST(reportSvg, HeatmapColoursValuesAndLabelsTheRest) {
  Heatmap map("t", "BM", "BN", {"16", "32"}, {"16", "32"});
  map.at(0, 0) = {10.0, "ok", "best"};
  map.at(0, 1) = {20.0, "ok", ""};
  map.at(1, 0) = {std::nullopt, "rejected:smem", "why"};
  std::string svg = map.render();
  EXPECT_EQ(test::xmlProblem(svg), "") << svg;
  EXPECT_TRUE(contains(svg, "data-row=\"16\" data-col=\"32\" data-status=\"ok\" data-value=\"20\""));
  EXPECT_TRUE(contains(svg, "data-row=\"32\" data-col=\"16\" data-status=\"rejected:smem\""));
  EXPECT_TRUE(contains(svg, "data-row=\"32\" data-col=\"32\" data-status=\"none\""));
  EXPECT_TRUE(contains(svg, "not measured"));
  EXPECT_TRUE(contains(svg, ">smem</tspan>"));
  EXPECT_EQ(viridis(0), "#440154");
  EXPECT_EQ(viridis(1), "#fde725");
}

TEST(reportPeak, LanesPerSmFollowTheArchitecture) {
  EXPECT_EQ(serving::fp32LanesPerSm(9, 0), 128);
  EXPECT_EQ(serving::fp32LanesPerSm(8, 9), 128);
  EXPECT_EQ(serving::fp32LanesPerSm(8, 0), 64);
  EXPECT_EQ(serving::fp32LanesPerSm(7, 0), 64);
  auto p = fp32Peak(test::reportGpu());
  ASSERT_TRUE(p);
  EXPECT_NEAR(p->tflops(), 132 * 128 * 2 * 1.98 / 1000, 1e-9);
  EXPECT_FALSE(fp32Peak(test::testGpu()));  // no clock stored
  GpuSpec unknownArch = test::reportGpu();
  unknownArch.ccMajor = 13;  // no known lane count: no line rather than a guessed one
  EXPECT_FALSE(fp32Peak(unknownArch));
}

using reportData = ReportFixture;

TEST_F(reportData, ReadsCurrentRowsSizesBaselinesAndCountsStaleOnes) {
  test::writeReportFixture(path);
  ReportData d = load();
  ASSERT_EQ(d.sizes.size(), 4u);
  EXPECT_EQ(sizeLabel(d.sizes[0]), "1024");
  EXPECT_EQ(sizeLabel(d.sizes[1]), "4096x1024x512");
  EXPECT_EQ(sizeLabel(d.sizes[3]), "4096");
  EXPECT_EQ(d.families, (std::vector<std::string>{"blocktile1d", "smem"}));
  EXPECT_EQ(d.staleRows, 2u);
  EXPECT_EQ(d.heatmapFamily, "blocktile1d");
  EXPECT_EQ(d.chosenSize, 3u);
  EXPECT_NEAR(d.cublasGflops.at(3), 50000, 1e-6);
  ASSERT_EQ(d.runs.size(), 1u);
  ASSERT_TRUE(d.best(3, "blocktile1d"));
  EXPECT_EQ(d.best(3, "blocktile1d")->instance, "blocktile1d_bm128_bn128_bk8_tm16");
  EXPECT_EQ(d.best(1, "blocktile1d"), nullptr);
  for (const auto& r : d.rows) EXPECT_NE(r.instance, test::kStaleInstance);
  // A static-constraint rejection keeps its place although its name does not parse.
  bool constraint = false;
  for (const auto& r : d.rows) constraint |= r.status == "rejected:constraint";
  EXPECT_TRUE(constraint);
}

TEST_F(reportData, FamilyAndSizeCanBeChosen) {
  test::writeReportFixture(path);
  ReportData d = load({"", "smem", "2048"});
  EXPECT_EQ(d.heatmapFamily, "smem");
  EXPECT_EQ(d.chosenSize, 2u);
  EXPECT_EQ(load({"", "", "4096x1024x512"}).chosenSize, 1u);
  EXPECT_EQ(load({"h100", "", ""}).gpu.name, "NVIDIA H100 80GB HBM3");
  try {
    load({"", "", "999"});
    ADD_FAILURE() << "a size without rows";
  } catch (const Error& e) {
    EXPECT_EQ(exitCodeOf(e), kExitFailure);
    EXPECT_TRUE(contains(e.what(), "measured: 1024, 4096x1024x512, 2048, 4096")) << e.what();
  }
  EXPECT_THROW(load({"", "nosuchfamily", ""}), UsageError);
  EXPECT_THROW(load({"a100", "", ""}), UsageError);
}

// Transposed and batched problems: labelled, listed after the nn single products in groups of one
// layout and batch (each smallest first), each with its own cuBLAS baseline; the default size is
// still the largest problem; the size chart draws no line from one group into the next.
TEST_F(reportData, ProblemsAreGroupedAndLabelledByLayoutAndBatch) {
  test::writeReportFixture(path);
  {
    db::Database database(path, {db::OpenMode::ReadWrite, db::OpenCheck::Quick});
    db::SqliteStore store(database);
    auto run = store.beginRun(test::testRun(test::reportGpu()));
    for (auto [layout, batch] : {std::pair{"tn", 1LL}, std::pair{"nn", 4LL}})
      for (long long size : {2048LL, 1024LL}) {
        auto r = test::okResult("smem_bs32", size, size, size, 6000, test::reportGpu());
        r.key.problem.layout = layout;
        r.key.problem.batch = batch;
        ASSERT_TRUE(store.recordResult(run, r));
        auto b = test::cublasBaseline(size, 1.0, "12.9");
        b.problem.layout = layout;
        b.problem.batch = batch;
        ASSERT_TRUE(store.recordBaseline(run, b));
      }
  }
  ReportData d = load();
  std::vector<std::string> labels;
  for (const auto& s : d.sizes) labels.push_back(sizeLabel(s));
  EXPECT_EQ(labels, (std::vector<std::string>{"1024", "4096x1024x512", "2048", "4096", "1024 batch 4",
                                              "2048 batch 4", "1024 tn", "2048 tn"}));
  EXPECT_EQ(d.chosenSize, 3u);
  EXPECT_NEAR(d.cublasGflops.at(4), db::gflopsOf({1024, 1024, 1024, "nn", "any", 4}, 1.0), 1e-6);
  EXPECT_NEAR(d.cublasGflops.at(7), db::gflopsOf({2048, 2048, 2048, "tn"}, 1.0), 1e-6);
  EXPECT_EQ(load({"", "smem", ""}).chosenSize, 3u);  // 4096³ is more work than 2048³ × 4

  std::string page = HtmlReport(d).render();
  expectWellFormed(page);
  EXPECT_TRUE(contains(page, ">1024 tn</text>"));
  EXPECT_TRUE(contains(page, "<td>2048 batch 4</td>"));
  // smem's line: one polyline per group (nn, nn batch 4, tn).
  std::string smem = page.substr(page.find("data-series=\"smem\""));
  smem = smem.substr(0, smem.find("</g>"));
  EXPECT_EQ(count(smem, "<polyline"), 3u);
}

TEST_F(reportData, AnEmptyDatabaseHasNothingToReport) {
  { db::Database create(path, {db::OpenMode::ReadWrite, db::OpenCheck::Quick}); }
  try {
    load();
    ADD_FAILURE() << "no rows";
  } catch (const Error& e) {
    EXPECT_EQ(exitCodeOf(e), kExitFailure);
    EXPECT_TRUE(contains(e.what(), "run `gemmtune tune` first")) << e.what();
  }
}

using reportPage = ReportFixture;

TEST_F(reportPage, FixturePageIsWellFormedSelfContainedAndHasEverySeries) {
  test::writeReportFixture(path);
  ReportData d = load();
  std::string page = HtmlReport(d, "2025-01-01T00:00:00.000000Z").render();
  if (const char* keep = std::getenv("GEMMTUNE_REPORT_HTML")) test::writeBytes(keep, page);
  if (const char* keep = std::getenv("GEMMTUNE_REPORT_DB")) {  // for trying `gemmtune report` by hand
    std::filesystem::remove(keep);
    test::writeReportFixture(keep);
  }

  expectWellFormed(page);
  expectSelfContained(page);
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_TRUE(contains(page, "<title>gemmtune report: NVIDIA H100 80GB HBM3</title>"));

  // Size chart: one line per family, cuBLAS, and the peak line with where it comes from.
  EXPECT_TRUE(contains(page, "data-series=\"blocktile1d\""));
  EXPECT_TRUE(contains(page, "data-series=\"smem\""));
  EXPECT_TRUE(contains(page, "data-series=\"cuBLAS\""));
  EXPECT_TRUE(contains(page, "data-ref=\"FP32 peak\" data-value=\"66.908\""));
  EXPECT_TRUE(contains(page, "132 SMs × 128 FP32 lanes × 2 FLOP/FMA × 1.980 GHz boost clock"));
  EXPECT_TRUE(contains(page, "from the stored GPU spec"));
  EXPECT_TRUE(contains(page, "data-x=\"3\" data-y=\"24\""));   // blocktile1d's best at 4096
  EXPECT_TRUE(contains(page, "data-x=\"3\" data-y=\"50\""));   // cuBLAS at 4096

  // Heatmap: best TFLOP/s per BM × BN over BK and TM; rejected and pruned cells say why.
  EXPECT_TRUE(contains(cellTag(page, "128", "128"), "data-status=\"ok\" data-value=\"24\""));
  EXPECT_TRUE(contains(cellTag(page, "64", "128"), "data-value=\"21.5\""));
  EXPECT_TRUE(contains(cellTag(page, "32", "16"), "data-status=\"ok\""));  // one ok row among pruned ones
  EXPECT_TRUE(contains(cellTag(page, "256", "128"), "data-status=\"rejected:smem\""));
  EXPECT_TRUE(contains(cellTag(page, "128", "256"), "data-status=\"rejected:smem\""));
  EXPECT_TRUE(contains(cellTag(page, "256", "256"), "data-status=\"rejected:constraint\""));
  EXPECT_TRUE(contains(cellTag(page, "16", "16"), "data-status=\"pruned:rank\""));
  EXPECT_TRUE(contains(cellTag(page, "16", "32"), "data-status=\"pruned:rank\""));
  EXPECT_EQ(count(page, "<g class=\"cell\""), 25u);
  EXPECT_TRUE(contains(page, "best: blocktile1d_bm128_bn128_bk8_tm16"));

  // Scatter: one point per ok row at 4096 (blocktile1d's ok rows plus three smem rows).
  size_t okRows = 0;
  for (const auto& r : d.rows) okRows += r.size == 3 && r.ok();
  EXPECT_TRUE(contains(page, std::to_string(okRows) + " ok rows with a recorded occupancy"));

  // Best-configuration table with % of cuBLAS; stale rows only counted.
  EXPECT_TRUE(contains(page, "<td><code>blocktile1d_bm128_bn128_bk8_tm16</code></td><td class=\"num\">24.0</td>"
                             "<td class=\"num\">50.0</td><td class=\"num\">48%</td>"));
  EXPECT_TRUE(contains(page, "2 stale rows excluded"));
  EXPECT_FALSE(contains(page, test::kStaleInstance));
  EXPECT_FALSE(contains(page, "99.0"));
}

TEST_F(reportPage, NamesFromTheDatabaseAreEscaped) {
  test::writeReportFixture(path, test::reportGpu("Evil <script>alert(\"gpu\")</script> & Co"),
                           "gemmtune tune <script>alert('cmd')</script> --size 4096");
  std::string page = HtmlReport(load()).render();
  expectWellFormed(page);
  EXPECT_FALSE(contains(page, "<script"));
  EXPECT_TRUE(contains(page, "Evil &lt;script&gt;alert(&quot;gpu&quot;)&lt;/script&gt; &amp; Co"));
  EXPECT_TRUE(contains(page, "gemmtune tune &lt;script&gt;alert(&#39;cmd&#39;)&lt;/script&gt; --size 4096"));
}
