// `gemmtune import FILE.json`: merge an export into a results store (a SQLite file or a
// PostgreSQL server). Checked completely before anything is written, then written in one
// transaction; importing twice adds nothing; a measurement never replaces a later one.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "CliContext.hpp"
#include "DbPath.hpp"
#include "JsonExchange.hpp"
#include "ExitCodes.hpp"
#include "FamilyRegistry.hpp"
#include "Quote.hpp"
#include "ResultStore.hpp"

namespace gemmtune::cli {

namespace {

struct ImportArgs {
  std::string db, file;
};

// A row of a family this build knows must carry exactly that family's parameters, within their
// bounds, and agree with its instance name (issue 13, defect 2). Rows of families this build
// lacks keep the generic check (a flat object of integers): they are stored, never served.
void checkKnownFamilies(const db::ExchangeFile& file, const std::string& source) {
  for (std::size_t i = 0; i < file.results.size(); ++i) {
    const db::ResultRecord& rec = file.results[i].record;
    const Family* f = FamilyRegistry::builtin().find(rec.family);
    if (!f) continue;
    auto fail = [&](const std::string& why) {
      throw DataError(fmt::format("{}: results[{}].params: {}; nothing was imported", source, i, why));
    };
    auto params = nlohmann::json::parse(rec.params);  // checked flat and integer by the reader
    if (params.size() != f->params.size()) fail(fmt::format("{} takes exactly {} parameters", f->name, f->params.size()));
    Config c{f, {}, false};
    for (const auto& p : f->params) {
      auto it = params.find(p.name);
      if (it == params.end()) fail(fmt::format("missing {} for {}", p.name, f->name));
      int v = it->get<int>();
      if (v > p.maxValue()) fail(fmt::format("{}={} is above its largest accepted value {}", p.name, v, p.maxValue()));
      c.values.push_back(v);
    }
    std::string unguarded = c.name();
    c.guarded = true;
    if (rec.instance() != unguarded && rec.instance() != c.name())
      fail(fmt::format("they name {}, not the instance {}", unguarded, quoteInput(rec.instance())));
  }
}

int run(const ImportArgs& a) {
  const std::string location = db::resolveDatabasePath(a.db).string();
  db::ExchangeFile file = db::readExchangeFile(a.file);
  checkKnownFamilies(file, a.file);
  auto store = db::openStore(location, {db::OpenMode::ReadWrite, db::OpenCheck::Quick});
  db::ImportSummary s = db::importExchange(*store, file);
  fmt::print("imported {}: {} results written, {} unchanged (already stored or older); {} baselines written, "
             "{} unchanged; {} GPUs and {} runs added\n",
             a.file, s.resultsWritten, s.resultsUnchanged, s.baselinesWritten, s.baselinesUnchanged, s.gpusAdded,
             s.runsAdded);
  return kExitOk;
}

}  // namespace

Action addImportCommand(CLI::App& app, CliContext&) {
  auto a = std::make_shared<ImportArgs>();
  auto* sub = app.add_subcommand("import", "Merge a JSON export (from gemmtune export) into the results store");
  sub->add_option("file", a->file, "File written by gemmtune export")->required()->check(CLI::ExistingFile)
      ->type_name("FILE.json");
  addDbOption(sub, a->db);
  sub->footer(
      "Results merge by cache key: a row is written when it is new or measured later than the stored\n"
      "one. A malformed file is rejected as a whole (exit 65) and the store is left untouched; the\n"
      "rows are written in one transaction. --db takes a path, sqlite:PATH or postgresql://...\n\n"
      "Examples:\n"
      "  gemmtune import h100-results.json\n"
      "  gemmtune import --db postgresql://tuner@dbhost/gemmtune h100-results.json\n"
      "  gemmtune import --db merged.db a100.json && gemmtune import --db merged.db h100.json");
  return [a] { return run(*a); };
}

}  // namespace gemmtune::cli
