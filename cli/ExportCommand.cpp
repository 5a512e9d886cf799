// `gemmtune export FILE.json`: GPUs, runs, results and baselines of any results store (a SQLite
// file or a PostgreSQL server) as a versioned JSON file (docs/db-format.md) that `gemmtune
// import` merges into another store.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "CliContext.hpp"
#include "DbPath.hpp"
#include "JsonExchange.hpp"
#include "ExitCodes.hpp"
#include "ResultStore.hpp"

namespace gemmtune::cli {

namespace {

struct ExportArgs {
  std::string db, file;
  bool noCubins = false;
};

int run(const ExportArgs& a) {
  const std::string location = db::resolveDatabasePath(a.db).string();
  if (!db::storeMayExist(location))
    throw IoError(fmt::format("no database at {}; nothing to export", location));
  auto store = db::openStore(location, {db::OpenMode::ReadOnly, db::OpenCheck::Quick});
  if (!store->hasSchema()) {  // a 0-byte file or an empty server database: no results, not damage
    fmt::print(stderr, "gemmtune: {} holds no tuning results yet; nothing to export\n", store->location());
    return kExitFailure;
  }
  db::ExportOptions options;
  options.withCubins = !a.noCubins;
  db::ExportSummary s = db::exportJsonFile(*store, a.file, options);
  spdlog::info("exported {} results, {} baselines, {} runs, {} GPUs{}", s.results, s.baselines, s.runs, s.gpus,
               a.file == "-" ? "" : " to " + a.file);
  return kExitOk;
}

}  // namespace

Action addExportCommand(CLI::App& app, CliContext&) {
  auto a = std::make_shared<ExportArgs>();
  auto* sub = app.add_subcommand("export", "Write the results store (SQLite or PostgreSQL) as a versioned JSON file");
  sub->add_option("file", a->file, "Output file (- for stdout)")->required()->type_name("FILE.json");
  addDbOption(sub, a->db);
  sub->add_flag("--no-cubins", a->noCubins, "Leave out the compiled kernels (smaller; the target recompiles)");
  sub->footer(
      "Examples:\n"
      "  gemmtune export h100-results.json\n"
      "  gemmtune export - --no-cubins | gzip > results.json.gz\n"
      "  gemmtune export --db postgresql://tuner@dbhost/gemmtune team.json\n"
      "  (on another machine) gemmtune import h100-results.json");
  return [a] { return run(*a); };
}

}  // namespace gemmtune::cli
