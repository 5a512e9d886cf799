// Database: a thin RAII layer over one sqlite3 connection — opening with checks (the file is ours,
// undamaged, of a schema we understand), prepared statements with bound parameters only, and
// BEGIN IMMEDIATE transactions. SQLite failures become SqliteError, which keeps the SQLite result
// code and maps it to the CLI exit code (damaged/foreign data 65, I/O 74).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "ExitCodes.hpp"
#include "OpenOptions.hpp"

namespace gemmtune::db {

class SqliteError : public CodedError {
 public:
  SqliteError(int sqliteCode, const std::string& message);
  // The extended SQLite result code (SQLITE_CORRUPT, SQLITE_BUSY, ...).
  int sqliteCode() const noexcept { return sqliteCode_; }

 private:
  int sqliteCode_;
};

class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql);
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&&) = delete;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Parameters are 1-based, as in SQLite. Binding keeps a copy of text and blobs.
  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view text);
  Statement& bind(int index, const char* text) { return bind(index, std::string_view(text)); }
  Statement& bind(int index, const std::string& text) { return bind(index, std::string_view(text)); }
  Statement& bindBlob(int index, std::string_view bytes);
  Statement& bindNull(int index);
  template <class T>
  Statement& bind(int index, const std::optional<T>& value) {
    return value ? bind(index, *value) : bindNull(index);
  }

  int parameterIndex(const char* name) const { return sqlite3_bind_parameter_index(stmt_, name); }

  // True while a row is available; false once the statement is done.
  bool step();
  // Runs a statement that returns no rows.
  void run();
  // Clears the bindings and rewinds, so the statement can be reused.
  void reset();

  bool isNull(int column) const;
  std::int64_t getInt64(int column) const;
  int getInt(int column) const { return static_cast<int>(getInt64(column)); }
  double getDouble(int column) const;
  std::string getText(int column) const;
  std::string getBlob(int column) const;
  std::optional<std::int64_t> getOptionalInt64(int column) const;
  std::optional<double> getOptionalDouble(int column) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

class Database {
 public:
  // Opens, checks and (ReadWrite) creates or migrates the schema. A damaged, foreign or
  // newer-schema file raises DataError-coded SqliteError/DataError and is left untouched.
  Database(const std::filesystem::path& path, OpenOptions options);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  Statement prepare(std::string_view sql) const { return Statement(db_, sql); }
  // Runs one or more statements without parameters (schema text, pragmas).
  void exec(std::string_view sql);
  std::int64_t queryInt(std::string_view sql) const;
  std::int64_t lastInsertRowid() const { return sqlite3_last_insert_rowid(db_); }
  int changes() const { return sqlite3_changes(db_); }

  const std::filesystem::path& path() const { return path_; }
  std::string location() const { return path_.string(); }
  bool readOnly() const { return readOnly_; }
  // False for a new or 0-byte file opened read-only: it has no tables, hence no results.
  bool hasSchema() const { return hasSchema_; }
  sqlite3* handle() const { return db_; }

  // "ok" or the problems PRAGMA integrity_check lists (one per line).
  std::string integrityCheck() const;
  // A consistent copy of the whole database, WAL content included, through the backup API.
  void backupTo(const std::filesystem::path& target) const;

 private:
  void openConnection(bool immutable);
  void verifyOnOpen(const OpenOptions& options);

  std::filesystem::path path_;
  bool readOnly_ = true;
  bool hasSchema_ = false;
  sqlite3* db_ = nullptr;
};

// Writes use BEGIN IMMEDIATE: it takes the write lock at once, so two writers queue on
// busy_timeout instead of failing with SQLITE_BUSY when a read transaction tries to upgrade.
// Reads that must see one consistent state use a deferred (read) transaction. Rolls back unless
// committed.
class Transaction {
 public:
  enum class Kind { Write, Read };
  explicit Transaction(Database& db, Kind kind = Kind::Write);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  Database& db_;
  bool done_ = false;
};

// Throws SqliteError for any result code other than SQLITE_OK/ROW/DONE.
void checkSqlite(sqlite3* db, int rc, std::string_view what);

}  // namespace gemmtune::db
