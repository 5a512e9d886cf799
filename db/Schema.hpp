// Schema: the results store's tables and the migrations that build them. The file carries
// PRAGMA application_id (it is ours) and PRAGMA user_version (which schema it has); migrations
// run in one BEGIN IMMEDIATE transaction, so a crash leaves the old schema intact and two
// processes opening a new file at once do not both create it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace gemmtune::db {

class Database;

inline constexpr std::int32_t kApplicationId = 0x474D5455;  // "GMTU"
inline constexpr int kSchemaVersion = 3;

struct SchemaState {
  std::int64_t applicationId = 0;
  int version = 0;
  bool empty = true;     // a new (possibly 0-byte) file: no tables, no application_id
  bool foreign = false;  // another program's database
};

// One step of the schema, as SQLite DDL; PostgreSQL runs postgresSql() of the same text, so both
// backends have one logical schema.
struct Migration {
  int toVersion;
  const char* sql;
  // SQLite only: TEMP views that let a connection read a database of the previous version as if
  // it had this one, without writing it; null when reads cannot be bridged so.
  const char* readOnlyViews;
};
std::span<const Migration> schemaMigrations();
// SQLite DDL in PostgreSQL's types: 64-bit integers and identity keys, DOUBLE PRECISION, BYTEA,
// TEXT in byte order; descending index columns with NULLs last, as SQLite orders them.
std::string postgresSql(std::string_view sqliteSql);

SchemaState readSchemaState(const Database& db);

// A read-only SQLite database of an older `version`: makes this connection read it as
// kSchemaVersion (Migration::readOnlyViews). False, doing nothing, when some step cannot be bridged.
bool readAsCurrentSchema(Database& db, int version);

// Brings a writable database to kSchemaVersion. Throws DataError for foreign or newer files.
void migrateSchema(Database& db);

}  // namespace gemmtune::db
