// `gemmtune db backup FILE` / `gemmtune db check`: maintenance of the results database. The
// backup goes through the SQLite backup API, so rows still in the -wal file are included and
// the copy is consistent even while a tuning run writes.
#include <fmt/format.h>

#include "CliContext.hpp"
#include "DbPath.hpp"
#include "Database.hpp"
#include "Schema.hpp"
#include "Errors.hpp"

namespace gemmtune::cli {

namespace {

struct DbArgs {
  std::string db, backupFile;
  CLI::App* backup = nullptr;
  CLI::App* check = nullptr;
};

int run(const DbArgs& a) {
  auto path = db::resolveDatabasePath(a.db);
  db::Database database(path, {db::OpenMode::ReadOnly, db::OpenCheck::Quick});
  if (a.backup->parsed()) {
    database.backupTo(a.backupFile);
    fmt::print("backed up {} to {}\n", path.string(), a.backupFile);
    return kExitOk;
  }
  // A 0-byte file reads as "no results" everywhere (docs/db-format.md), here too.
  if (!database.hasSchema()) {
    fmt::print("{}: ok (empty: no results yet)\n", path.string());
    return kExitOk;
  }
  std::string check = database.integrityCheck();
  if (check != "ok") throw DataError(fmt::format("{} fails the integrity check: {}", path.string(), check));
  fmt::print("{}: ok (schema {}, {} results, {} runs, {} GPUs)\n", path.string(), db::kSchemaVersion,
             database.queryInt("SELECT count(*) FROM results"), database.queryInt("SELECT count(*) FROM runs"),
             database.queryInt("SELECT count(*) FROM gpus"));
  return kExitOk;
}

}  // namespace

Action addDbCommand(CLI::App& app, CliContext&) {
  auto a = std::make_shared<DbArgs>();
  auto* sub = app.add_subcommand("db", "Back up or check the results database");
  sub->require_subcommand(1);
  addDbOption(sub, a->db);
  a->backup = sub->add_subcommand("backup", "Write a consistent copy (SQLite backup API, WAL content included)");
  a->backup->add_option("file", a->backupFile, "New file for the copy")->required()->type_name("FILE");
  a->check = sub->add_subcommand("check", "Run a full integrity check and show the row counts");
  a->backup->fallthrough();
  a->check->fallthrough();
  sub->footer(
      "Examples:\n"
      "  gemmtune db backup ~/tune-$(date +%F).db\n"
      "  gemmtune db check --db results/tune.db");
  return [a] { return run(*a); };
}

}  // namespace gemmtune::cli
