#include "PgConnection.hpp"
#include "ExitCodes.hpp"

#include <fmt/format.h>
#include <libpq-fe.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <thread>
#include <cstdlib>
#include <memory>

#include "Log.hpp"
#include "ResultStore.hpp"
#include "Schema.hpp"

namespace gemmtune::db {

namespace {

// The metadata row that makes a PostgreSQL database ours, like SQLite's application_id and
// user_version.
constexpr const char* kMetaTable = "gemmtune_meta";
// pg_advisory_xact_lock key: "GMTU", so two tuners opening a new store do not both create it.
constexpr std::int64_t kMigrationLock = 0x474D5455;

std::string without(std::string text, const std::string& secret) {
  if (secret.empty()) return text;
  for (auto at = text.find(secret); at != std::string::npos; at = text.find(secret, at + 3))
    text.replace(at, secret.size(), "***");
  return text;
}

// libpq's messages end in a newline and continue on indented lines: one line for our messages.
std::string trimmed(std::string text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\n') {
      out += text[i];
      continue;
    }
    while (i + 1 < text.size() && (text[i + 1] == '\t' || text[i + 1] == ' ' || text[i + 1] == '\n')) ++i;
    out += ' ';
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// Integrity and data errors (SQLSTATE classes 22, 23) are bad data; a connection the server
// closed (a restart, "terminating connection due to administrator command") is a lost
// connection the store may re-establish; the rest is I/O.
[[noreturn]] void throwResultError(pg_result* res, pg_conn* conn, std::string_view what, const std::string& secret) {
  const char* state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : nullptr;
  std::string message = res ? PQresultErrorMessage(res) : PQerrorMessage(conn);
  if (message.empty()) message = PQerrorMessage(conn);
  message = without(trimmed(message), secret);
  if (PQstatus(conn) == CONNECTION_BAD)
    throw StoreConnectionLost(fmt::format("lost the connection to the PostgreSQL server ({})", message));
  bool data = state && (std::string_view(state).starts_with("22") || std::string_view(state).starts_with("23"));
  throw CodedError(data ? kExitDataError : kExitIoError, fmt::format("PostgreSQL: {}: {}", what, message));
}

struct ResultDeleter {
  void operator()(pg_result* r) const { PQclear(r); }
};
using Result = std::unique_ptr<pg_result, ResultDeleter>;

}  // namespace

// --- statements ------------------------------------------------------------------------------

PgStatement::PgStatement(pg_conn* conn, std::string_view sql, const std::string* secret)
    : conn_(conn), secret_(secret) {
  int next = 1;
  bool quoted = false;
  for (char c : sql) {
    if (c == '\'') quoted = !quoted;
    if (c == '?' && !quoted)
      sql_ += fmt::format("${}", next++);
    else
      sql_ += c;
  }
  params_.resize(static_cast<std::size_t>(next - 1));
}

PgStatement::~PgStatement() {
  if (result_) PQclear(result_);
}

PgStatement::PgStatement(PgStatement&& other) noexcept
    : conn_(other.conn_),
      sql_(std::move(other.sql_)),
      secret_(other.secret_),
      params_(std::move(other.params_)),
      result_(other.result_),
      row_(other.row_),
      rows_(other.rows_) {
  other.result_ = nullptr;
}

PgStatement::Param& PgStatement::slot(int index) {
  if (index < 1 || static_cast<std::size_t>(index) > params_.size())
    throw Error(fmt::format("PostgreSQL: parameter {} of {} out of range", index, params_.size()));
  return params_[static_cast<std::size_t>(index - 1)];
}

PgStatement& PgStatement::bind(int index, std::int64_t value) {
  slot(index) = {std::to_string(value), false};
  return *this;
}

PgStatement& PgStatement::bind(int index, double value) {
  slot(index) = {fmt::format("{}", value), false};  // shortest text that reads back exactly
  return *this;
}

PgStatement& PgStatement::bind(int index, std::string_view text) {
  slot(index) = {std::string(text), false};
  return *this;
}

PgStatement& PgStatement::bindBlob(int index, std::string_view bytes) {
  slot(index) = {std::string(bytes), true};
  return *this;
}

PgStatement& PgStatement::bindNull(int index) {
  slot(index) = {std::nullopt, false};
  return *this;
}

void PgStatement::execute() {
  std::vector<const char*> values;
  std::vector<int> lengths, formats;
  std::vector<Oid> types;
  for (const auto& p : params_) {
    values.push_back(p.value ? p.value->data() : nullptr);
    lengths.push_back(p.value ? static_cast<int>(p.value->size()) : 0);
    formats.push_back(p.binary ? 1 : 0);
    types.push_back(p.binary ? 17 : 0);  // 17: bytea; 0: inferred from the column
  }
  result_ = PQexecParams(conn_, sql_.c_str(), static_cast<int>(params_.size()), types.data(), values.data(),
                         lengths.data(), formats.data(), 0);
  auto status = result_ ? PQresultStatus(result_) : PGRES_FATAL_ERROR;
  if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK)
    throwResultError(result_, conn_, "running a statement", *secret_);
  rows_ = status == PGRES_TUPLES_OK ? PQntuples(result_) : 0;
}

bool PgStatement::step() {
  if (!result_) execute();
  if (row_ < rows_) ++row_;
  return row_ < rows_;
}

void PgStatement::run() {
  while (step()) {
  }
}

void PgStatement::reset() {
  if (result_) PQclear(result_);
  result_ = nullptr;
  row_ = -1;
  rows_ = 0;
  for (Param& p : params_) p = Param{};
}

bool PgStatement::isNull(int column) const { return PQgetisnull(result_, row_, column) != 0; }

std::int64_t PgStatement::getInt64(int column) const {
  const char* text = PQgetvalue(result_, row_, column);
  std::int64_t value = 0;
  std::from_chars(text, text + PQgetlength(result_, row_, column), value);
  return value;
}

double PgStatement::getDouble(int column) const { return std::strtod(PQgetvalue(result_, row_, column), nullptr); }

std::string PgStatement::getText(int column) const {
  return std::string(PQgetvalue(result_, row_, column), static_cast<std::size_t>(PQgetlength(result_, row_, column)));
}

std::string PgStatement::getBlob(int column) const {
  if (isNull(column)) return {};
  std::size_t length = 0;
  unsigned char* bytes =
      PQunescapeBytea(reinterpret_cast<const unsigned char*>(PQgetvalue(result_, row_, column)), &length);
  if (!bytes) throw Error("PostgreSQL: out of memory reading a blob");
  std::string out(reinterpret_cast<const char*>(bytes), length);
  PQfreemem(bytes);
  return out;
}

std::optional<std::int64_t> PgStatement::getOptionalInt64(int column) const {
  if (isNull(column)) return std::nullopt;
  return getInt64(column);
}

std::optional<double> PgStatement::getOptionalDouble(int column) const {
  if (isNull(column)) return std::nullopt;
  return getDouble(column);
}

// --- connection ------------------------------------------------------------------------------

PgConnection::PgConnection(const std::string& url, OpenOptions options) : location_(maskLocation(url)) {
  char* parseError = nullptr;
  if (PQconninfoOption* parsed = PQconninfoParse(url.c_str(), &parseError)) {
    for (auto* o = parsed; o->keyword; ++o)
      if (std::string_view(o->keyword) == "password" && o->val) password_ = o->val;
    PQconninfoFree(parsed);
  } else {
    std::string why = parseError ? trimmed(parseError) : "cannot parse it";
    if (parseError) PQfreemem(parseError);
    throw UsageError(fmt::format("results store {}: {}", location_, without(why, url)));
  }
  conn_ = PQconnectdb(url.c_str());
  if (!conn_ || PQstatus(conn_) != CONNECTION_OK) {
    std::string why = conn_ ? trimmed(PQerrorMessage(conn_)) : "out of memory";
    if (conn_) PQfinish(conn_);
    conn_ = nullptr;
    throw CodedError(kExitUnavailable, fmt::format("cannot connect to the results store {}: {}", location_,
                                                   without(without(why, password_), url)));
  }
  exec("SET client_min_messages = warning");
  checkSchema(options.mode, options.migrate);
}

void PgConnection::reconnect() {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kReconnectPatienceSeconds);
  for (int attempt = 0;; ++attempt) {
    PQreset(conn_);
    if (PQstatus(conn_) == CONNECTION_OK) {
      logger()->info("{}: reconnected", location_);
      exec("SET client_min_messages = warning");
      return;
    }
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(1000, 50 << std::min(attempt, 5))));
  }
  throw StoreConnectionLost(fmt::format(
      "lost the connection to the results store {} and could not reconnect within {} s ({}); the results "
      "written before are kept: run the same command again once the server is back (tune --resume "
      "measures only what is missing)",
      location_, kReconnectPatienceSeconds, without(trimmed(PQerrorMessage(conn_)), password_)));
}

PgConnection::~PgConnection() {
  if (conn_) PQfinish(conn_);
}

void PgConnection::exec(std::string_view sql) {
  Result res(PQexec(conn_, std::string(sql).c_str()));
  auto status = res ? PQresultStatus(res.get()) : PGRES_FATAL_ERROR;
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK)
    throwResultError(res.get(), conn_, "running a statement", password_);
}

namespace {

struct PgSchemaState {
  bool empty = true;
  bool foreign = false;
  int version = 0;
};

PgSchemaState readState(const PgConnection& conn) {
  PgSchemaState s;
  auto tables = conn.prepare("SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = current_schema()");
  tables.step();
  s.empty = tables.getInt64(0) == 0;
  if (s.empty) return s;
  auto meta = conn.prepare("SELECT to_regclass(?) IS NOT NULL");
  meta.bind(1, kMetaTable).step();
  if (meta.getText(0) != "t") {
    s.foreign = true;
    return s;
  }
  auto row = conn.prepare(fmt::format("SELECT application_id, schema_version FROM {}", kMetaTable));
  if (!row.step() || row.getInt64(0) != kApplicationId) {
    s.foreign = true;
    return s;
  }
  s.version = row.getInt(1);
  return s;
}

}  // namespace

void PgConnection::checkSchema(OpenMode mode, bool migrate) {
  auto refuse = [&](const PgSchemaState& s) {
    if (s.foreign)
      throw DataError(fmt::format("{} belongs to another program (its tables are not a gemmtune schema); "
                                  "it was not modified",
                                  location_));
    if (s.version > kSchemaVersion)
      throw DataError(fmt::format("{} has schema version {}, newer than this gemmtune ({}); it was not modified",
                                  location_, s.version, kSchemaVersion));
  };
  PgSchemaState s = readState(*this);
  refuse(s);
  if (mode == OpenMode::ReadOnly) {
    if (!s.empty && s.version < kSchemaVersion)
      throw DataError(fmt::format("{} has schema version {}; open it once with a writing command to migrate it",
                                  location_, s.version));
    hasSchema_ = !s.empty;
    return;
  }
  if (s.version == kSchemaVersion) {
    hasSchema_ = true;
    return;
  }
  if (!migrate && !s.empty)
    throw DataError(fmt::format("{} has the older schema version {}; a gemmtune command that writes (tune, "
                                "import) upgrades it to {}",
                                location_, s.version, kSchemaVersion));
  PgTransaction tx(*this);
  exec(fmt::format("SELECT pg_advisory_xact_lock({})", kMigrationLock));
  s = readState(*this);  // again under the lock: another tuner may have migrated meanwhile
  refuse(s);
  if (s.empty) exec(fmt::format("CREATE TABLE {} (application_id BIGINT NOT NULL, schema_version INTEGER NOT NULL)",
                                kMetaTable));
  for (const auto& m : schemaMigrations()) {
    if (m.toVersion <= s.version) continue;
    logger()->debug("{}: migrating the schema to version {}", location_, m.toVersion);
    exec(postgresSql(m.sql));
  }
  exec(fmt::format("DELETE FROM {}", kMetaTable));
  exec(fmt::format("INSERT INTO {} VALUES ({}, {})", kMetaTable, kApplicationId, kSchemaVersion));
  tx.commit();
  hasSchema_ = true;
}

// --- transactions ----------------------------------------------------------------------------

PgTransaction::PgTransaction(PgConnection& conn, Kind kind) : conn_(conn) {
  conn_.exec(kind == Kind::Read ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" : "BEGIN");
}

PgTransaction::~PgTransaction() {
  if (done_) return;
  try {
    conn_.exec("ROLLBACK");
  } catch (...) {  // a destructor never throws; a lost connection has rolled back already
  }
}

void PgTransaction::commit() {
  conn_.exec("COMMIT");
  done_ = true;
}

}  // namespace gemmtune::db
