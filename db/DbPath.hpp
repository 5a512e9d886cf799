// Where the results database lives: --db PATH, else $GEMMTUNE_DB, else
// $XDG_DATA_HOME/gemmtune/tune.db, else ~/.local/share/gemmtune/tune.db.
#pragma once

#include <filesystem>
#include <string>

namespace gemmtune::db {

inline constexpr const char* kDbOptionHelp =
    "Results store: a path, sqlite:PATH or postgresql://user@host/db (default: $GEMMTUNE_DB, else "
    "$XDG_DATA_HOME/gemmtune/tune.db)";

std::filesystem::path defaultDatabasePath();
// `fromOption` is the --db value; empty when not given.
std::filesystem::path resolveDatabasePath(const std::string& fromOption);

}  // namespace gemmtune::db
