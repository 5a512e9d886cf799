// openStore: the one place that turns a location string into a results-store backend.
#include <fmt/format.h>

#include <filesystem>
#include <regex>

#include "gemmtune/Errors.hpp"
#include "PgConnection.hpp"
#include "ResultStore.hpp"
#include "SqliteStore.hpp"

namespace gemmtune::db {

namespace {
constexpr std::string_view kSqlitePrefix = "sqlite:";
}  // namespace

bool isPostgresLocation(std::string_view location) {
  return location.starts_with("postgresql://") || location.starts_with("postgres://");
}

std::optional<std::string> sqliteFileOf(const std::string& location) {
  if (isPostgresLocation(location)) return std::nullopt;
  if (location.starts_with(kSqlitePrefix)) return location.substr(kSqlitePrefix.size());
  return location;
}

bool storeMayExist(const std::string& location) {
  auto file = sqliteFileOf(location);
  std::error_code ec;
  return !file || std::filesystem::exists(*file, ec);
}

std::string maskLocation(std::string_view location) {
  if (!isPostgresLocation(location)) return std::string(location);
  // scheme://user:PASSWORD@host and ...?password=PASSWORD&...
  static const std::regex userinfo(R"(^([a-z]+://[^:@/?#]*):[^@/?#]*@)");
  static const std::regex query(R"(([?&]password=)[^&#]*)");
  std::string masked = std::regex_replace(std::string(location), userinfo, "$1:***@");
  return std::regex_replace(masked, query, "$1***");
}

bool postgresqlSupported() {
#ifdef GEMMTUNE_WITH_POSTGRESQL
  return true;
#else
  return false;
#endif
}

std::unique_ptr<ResultStore> openStore(const std::string& location, OpenOptions options) {
  if (isPostgresLocation(location)) {
#ifdef GEMMTUNE_WITH_POSTGRESQL
    return std::make_unique<SqlStore<PgConnection, PgTransaction>>(std::make_unique<PgConnection>(location, options));
#else
    throw UnavailableError(fmt::format("{}: this gemmtune was built without PostgreSQL support: install libpq-dev "
                                       "and rebuild (scripts/build.sh does)",
                                       maskLocation(location)));
#endif
  }
  return std::make_unique<SqliteStore>(std::make_unique<Database>(*sqliteFileOf(location), options));
}

}  // namespace gemmtune::db
