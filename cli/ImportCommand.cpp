// `gemmtune import FILE.json`: merge an export into this database. Checked completely before
// anything is written; importing twice adds nothing; a measurement never replaces a later one.
#include <fmt/format.h>

#include "CliContext.hpp"
#include "DbPath.hpp"
#include "JsonExchange.hpp"
#include "Errors.hpp"

namespace gemmtune::cli {

namespace {

struct ImportArgs {
  std::string db, file;
};

int run(const ImportArgs& a) {
  auto path = db::resolveDatabasePath(a.db);
  db::ExchangeFile file = db::readExchangeFile(a.file);
  db::Database database(path, {db::OpenMode::ReadWrite, db::OpenCheck::Quick});
  db::ImportSummary s = db::importExchange(database, file);
  fmt::print("imported {}: {} results written, {} unchanged (already stored or older); {} baselines written, "
             "{} unchanged; {} GPUs and {} runs added\n",
             a.file, s.resultsWritten, s.resultsUnchanged, s.baselinesWritten, s.baselinesUnchanged, s.gpusAdded,
             s.runsAdded);
  return kExitOk;
}

}  // namespace

Action addImportCommand(CLI::App& app, CliContext&) {
  auto a = std::make_shared<ImportArgs>();
  auto* sub = app.add_subcommand("import", "Merge a JSON export (from gemmtune export) into the results database");
  sub->add_option("file", a->file, "File written by gemmtune export")->required()->check(CLI::ExistingFile)
      ->type_name("FILE.json");
  addDbOption(sub, a->db);
  sub->footer(
      "Results merge by cache key: a row is written when it is new or measured later than the stored\n"
      "one. A malformed file is rejected as a whole (exit 65) and the database is left untouched.\n\n"
      "Examples:\n"
      "  gemmtune import h100-results.json\n"
      "  gemmtune import --db merged.db a100.json && gemmtune import --db merged.db h100.json");
  return [a] { return run(*a); };
}

}  // namespace gemmtune::cli
