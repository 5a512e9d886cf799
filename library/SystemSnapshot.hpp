// SystemSnapshot: where the library finds the read-only system snapshot it consults after the
// user's database (a file from `gemmtune db snapshot`, installed with the package):
//   1. $GEMMTUNE_SYSTEM_DB when set — a path, sqlite:PATH or postgresql://...; set but empty
//      turns the system snapshot off;
//   2. else <prefix>/share/gemmtune/system.db of the installation that holds this library
//      (found from the library's own file, so an installed tree can be moved), when it exists.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace gemmtune::library {

// The system store to consult, if any (the rule above).
std::optional<std::string> systemSnapshotLocation();
// The same rule with its inputs given: `env` is $GEMMTUNE_SYSTEM_DB (nullptr: unset), `libraryDir`
// the directory of the installed library (empty: unknown).
std::optional<std::string> systemSnapshotLocation(const char* env, const std::filesystem::path& libraryDir);

// <prefix>/share/gemmtune/system.db for a library installed in `libraryDir` (<prefix>/lib).
std::filesystem::path installedSystemSnapshot(const std::filesystem::path& libraryDir);
// The directory of the file (shared library or program) that holds this code; empty if unknown.
std::filesystem::path thisLibraryDir();

}  // namespace gemmtune::library
