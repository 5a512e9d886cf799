// PgConnection: one libpq connection to a PostgreSQL results store, with the same small
// statement API as db::Database (`?` parameters numbered from 1, step/get*), so SqlStore's
// queries run unchanged. Opening checks and (ReadWrite) creates or migrates the schema under an
// advisory lock in one transaction; a foreign or newer schema is refused untouched (DataError).
// Errors never carry the password of the URL (maskLocation). A statement that fails because the
// server went away throws StoreConnectionLost; reconnect() then re-establishes the connection
// (the same statements stay usable), waiting a while for a restarting server.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gemmtune/Errors.hpp"
#include "OpenOptions.hpp"

struct pg_conn;
struct pg_result;

namespace gemmtune::db {

class PgStatement {
 public:
  PgStatement(pg_conn* conn, std::string_view sql, const std::string* secret);
  ~PgStatement();
  PgStatement(PgStatement&& other) noexcept;
  PgStatement& operator=(PgStatement&&) = delete;
  PgStatement(const PgStatement&) = delete;
  PgStatement& operator=(const PgStatement&) = delete;

  PgStatement& bind(int index, std::int64_t value);
  PgStatement& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
  PgStatement& bind(int index, double value);
  PgStatement& bind(int index, std::string_view text);
  PgStatement& bind(int index, const char* text) { return bind(index, std::string_view(text)); }
  PgStatement& bind(int index, const std::string& text) { return bind(index, std::string_view(text)); }
  PgStatement& bindBlob(int index, std::string_view bytes);
  PgStatement& bindNull(int index);
  template <class T>
  PgStatement& bind(int index, const std::optional<T>& value) {
    return value ? bind(index, *value) : bindNull(index);
  }

  // Runs the statement on the first call; true while a row is available.
  bool step();
  void run();
  // Clears the bindings and the result, so the statement can run again.
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
  struct Param {
    std::optional<std::string> value;
    bool binary = false;
  };
  Param& slot(int index);
  void execute();

  pg_conn* conn_;
  std::string sql_;  // with $1, $2, ... for the ?s
  const std::string* secret_;
  std::vector<Param> params_;
  pg_result* result_ = nullptr;
  int row_ = -1;
  int rows_ = 0;
};

class PgConnection {
 public:
  PgConnection(const std::string& url, OpenOptions options);
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  PgStatement prepare(std::string_view sql) const { return PgStatement(conn_, sql, &password_); }
  // Runs statements without parameters.
  void exec(std::string_view sql);
  const std::string& location() const { return location_; }
  bool hasSchema() const { return hasSchema_; }
  // After StoreConnectionLost: connects again, retrying for up to kReconnectPatience (a server
  // restart takes seconds). Throws StoreConnectionLost, saying what to do, when it cannot.
  void reconnect();
  static constexpr int kReconnectPatienceSeconds = 10;

 private:
  void checkSchema(OpenMode mode, bool migrate);

  pg_conn* conn_ = nullptr;
  std::string location_;  // masked
  std::string password_;  // removed from every message
  bool hasSchema_ = false;
};

// BEGIN ... COMMIT; rolls back unless committed. A Read transaction is REPEATABLE READ and
// READ ONLY: all its statements see the state committed when its first one ran.
class PgTransaction {
 public:
  enum class Kind { Write, Read };
  explicit PgTransaction(PgConnection& conn, Kind kind = Kind::Write);
  ~PgTransaction();
  PgTransaction(const PgTransaction&) = delete;
  PgTransaction& operator=(const PgTransaction&) = delete;
  void commit();

 private:
  PgConnection& conn_;
  bool done_ = false;
};

}  // namespace gemmtune::db
