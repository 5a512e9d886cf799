// `gemmtune db backup FILE` / `gemmtune db check`: maintenance of the results database. The
// backup goes through the SQLite backup API, so rows still in the -wal file are included and
// the copy is consistent even while a tuning run writes.
// `gemmtune db snapshot --from LOCATION [--gpu NAME] -o FILE`: the rows that serve one GPU (or
// all), from any store, in a new SQLite file the library loads offline (db/Snapshot.hpp).
#include <fmt/format.h>

#include "CliContext.hpp"
#include "DbPath.hpp"
#include "Database.hpp"
#include "Schema.hpp"
#include "ExitCodes.hpp"
#include "GpuSelect.hpp"
#include "ResultStore.hpp"
#include "Snapshot.hpp"

namespace gemmtune::cli {

namespace {

struct DbArgs {
  std::string db, backupFile;
  std::string from, gpu, output;
  bool force = false;
  CLI::App* backup = nullptr;
  CLI::App* check = nullptr;
  CLI::App* snapshot = nullptr;
};

int runSnapshot(const DbArgs& a) {
  auto from = db::openStore(a.from, {db::OpenMode::ReadOnly, db::OpenCheck::Quick});
  std::set<std::string> fingerprints;
  std::string what = "all GPUs";
  if (!a.gpu.empty()) {
    // The same selection as `results --gpu`; a detected GPU with no rows has nothing to copy.
    serving::SelectedGpu gpu = serving::selectGpu(*from, a.gpu);
    if (!gpu.stored)
      throw UsageError(fmt::format("{} holds no results for {}", from->location(), gpu.spec.name));
    fingerprints.insert(gpu.fingerprint);
    what = gpu.spec.name;
  }
  auto counts = db::writeSnapshot(*from, fingerprints, a.output, a.force);
  fmt::print("snapshot of {} ({}) written to {}: {} GPU(s), {} run(s), {} ok result(s), {} baseline(s)\n",
             from->location(), what, a.output, counts.gpus, counts.runs, counts.results, counts.baselines);
  return kExitOk;
}

int run(const DbArgs& a) {
  if (a.snapshot->parsed()) return runSnapshot(a);
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
  // The file's own schema: an older one is read as the current one, and migrated by a writing command.
  const auto schema = database.queryInt("PRAGMA main.user_version");
  fmt::print("{}: ok (schema {}, {} results, {} runs, {} GPUs){}\n", path.string(), schema,
             database.queryInt("SELECT count(*) FROM results"), database.queryInt("SELECT count(*) FROM runs"),
             database.queryInt("SELECT count(*) FROM gpus"),
             schema < db::kSchemaVersion
                 ? fmt::format("; the next writing command (tune, import) upgrades it to schema {}", db::kSchemaVersion)
                 : std::string());
  return kExitOk;
}

}  // namespace

Action addDbCommand(CLI::App& app, CliContext&) {
  auto a = std::make_shared<DbArgs>();
  auto* sub = app.add_subcommand("db", "Back up, check or snapshot the results database");
  sub->require_subcommand(1);
  addDbOption(sub, a->db);
  a->backup = sub->add_subcommand("backup", "Write a consistent copy (SQLite backup API, WAL content included)");
  a->backup->add_option("file", a->backupFile, "New file for the copy")->required()->type_name("FILE");
  a->check = sub->add_subcommand("check", "Run a full integrity check and show the row counts");
  a->snapshot = sub->add_subcommand(
      "snapshot", "Copy the ok results, runs and cuBLAS baselines of one GPU (or all) from any store into a new "
                  "SQLite file the library loads offline");
  a->snapshot->add_option("--from", a->from, "Source store: a path, sqlite:PATH or postgresql://...")
      ->required()
      ->type_name("LOCATION");
  a->snapshot->add_option("--gpu", a->gpu, "Only this GPU: a stored profile, name or part of it (default: all)");
  a->snapshot->add_option("-o,--output", a->output, "New SQLite file")->required()->type_name("FILE");
  a->snapshot->add_flag("--force", a->force, "Replace FILE if it exists");
  a->backup->fallthrough();
  a->check->fallthrough();
  sub->footer(
      "Examples:\n"
      "  gemmtune db backup ~/tune-$(date +%F).db\n"
      "  gemmtune db check --db results/tune.db\n"
      "  gemmtune db snapshot --from postgresql://tuner@dbhost/gemmtune --gpu h100 -o h100.db\n\n"
      "A snapshot installed as <prefix>/share/gemmtune/system.db (beside <prefix>/lib/libgemmtune.so) is\n"
      "read by the library after the user's database; $GEMMTUNE_SYSTEM_DB names another store instead,\n"
      "and set but empty turns the system snapshot off.");
  return [a] { return run(*a); };
}

}  // namespace gemmtune::cli
