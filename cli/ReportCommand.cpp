// `gemmtune report`: one self-contained HTML page with SVG charts drawn from the results
// database — best TFLOP/s per size against cuBLAS and the FP32 peak, a heatmap of one family's
// parameter space, occupancy against speed — for sharing a tuning outcome without the tool.
#include <fmt/format.h>

#include "FamilyHelp.hpp"
#include "PresentEnvironment.hpp"
#include "CliContext.hpp"
#include "Clock.hpp"
#include "Database.hpp"
#include "SqliteStore.hpp"
#include "DbPath.hpp"
#include "HtmlReport.hpp"
#include "ReportData.hpp"
#include "ExitCodes.hpp"
#include "OutputFile.hpp"

namespace gemmtune::cli {

namespace {

struct ReportArgs {
  std::string db, output;
  report::ReportQuery query;
};

int run(const ReportArgs& a, const CliContext& ctx) {
  auto path = db::resolveDatabasePath(a.db);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    fmt::print(stderr, "gemmtune: no tuning results yet in {} (no database); run `gemmtune tune` first\n",
               path.string());
    return kExitFailure;
  }
  db::Database database(path, {db::OpenMode::ReadOnly, db::OpenCheck::Quick});
  if (!database.hasSchema()) {
    fmt::print(stderr, "gemmtune: no tuning results yet in {}; run `gemmtune tune` first\n", path.string());
    return kExitFailure;
  }
  db::SqliteStore store(database);
  auto data = report::loadReportData(store, path, a.query, serving::presentEnvironment(ctx.templatesDir.string()));
  std::string html = report::HtmlReport(data, db::utcTimestamp()).render();
  writeOutputFile(a.output, html, "the report");
  if (a.output == "-") return kExitOk;
  fmt::print(stderr, "gemmtune: wrote {} ({} at {}: {} current rows, {} stale excluded)\n", a.output, data.gpu.name,
             report::sizeLabel(data.sizes[data.chosenSize]), data.rows.size(), data.staleRows);
  return kExitOk;
}

}  // namespace

Action addReportCommand(CLI::App& app, CliContext& ctx) {
  auto a = std::make_shared<ReportArgs>();
  auto* sub = app.add_subcommand("report", "Write a self-contained HTML page with charts of the tuning results");
  sub->add_option("-o,--output", a->output, "Write the page to FILE ('-' for stdout)")->required()->type_name("FILE");
  addDbOption(sub, a->db);
  sub->add_option("--gpu", a->query.gpu,
                  "This GPU: auto, or a stored profile, name or part of it (default: the GPU tuned last)");
  sub->add_option("--family", a->query.family,
                  "Family for the heatmap (default: the most measured)");
  sub->add_option("--size", a->query.size,
                  "Size for the heatmap and the occupancy chart: N or MxNxK (default: the largest measured)")
      ->type_name("N|MxNxK");
  sub->footer(fmt::format(
      "The page has no scripts and loads nothing: open it offline, mail it, archive it. Stale rows (measured\n"
      "under another NVRTC, driver, template source, method or GPU fingerprint) are left out and counted.\n"
      "Examples:\n"
      "  gemmtune report -o report.html\n"
      "  gemmtune report --gpu h100 --family {0} --size 4096 -o h100-4096.html\n"
      "  gemmtune report --db results/tune.db --family {0} -o - > {0}.html",
      exampleFamily()));
  return [a, &ctx] { return run(*a, ctx); };
}

}  // namespace gemmtune::cli
