#include "DbPath.hpp"

#include <cstdlib>

#include "gemmtune/Errors.hpp"

namespace gemmtune::db {

namespace {
const char* nonEmptyEnv(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}
}  // namespace

std::filesystem::path defaultDatabasePath() {
  // XDG says a relative $XDG_DATA_HOME is invalid and must be ignored.
  if (const char* xdg = nonEmptyEnv("XDG_DATA_HOME"); xdg && xdg[0] == '/')
    return std::filesystem::path(xdg) / "gemmtune" / "tune.db";
  if (const char* home = nonEmptyEnv("HOME")) return std::filesystem::path(home) / ".local/share/gemmtune/tune.db";
  throw UsageError("neither HOME nor XDG_DATA_HOME is set: give the database with --db PATH or GEMMTUNE_DB");
}

std::filesystem::path resolveDatabasePath(const std::string& fromOption) {
  if (!fromOption.empty()) return fromOption;
  if (const char* env = nonEmptyEnv("GEMMTUNE_DB")) return env;
  return defaultDatabasePath();
}

}  // namespace gemmtune::db
