#include "Database.hpp"
#include "ExitCodes.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include <system_error>

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "Log.hpp"
#include "PendingFiles.hpp"
#include "Schema.hpp"

namespace gemmtune::db {

namespace {

ExitCode exitCodeFor(int sqliteCode) {
  switch (sqliteCode & 0xff) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
    case SQLITE_FORMAT:
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
    case SQLITE_ERROR:  // against our own schema: the file is not what it claims to be
      return kExitDataError;
    default:
      return kExitIoError;
  }
}

bool isDamage(int sqliteCode) {
  int primary = sqliteCode & 0xff;
  return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB || primary == SQLITE_FORMAT;
}

// file: URI for sqlite3_open_v2; only needed for the immutable fallback, so paths with '?' or
// '#' must not be misread as URI parameters.
std::string fileUri(const std::filesystem::path& path, std::string_view query) {
  std::string out = "file:";
  for (unsigned char c : std::filesystem::absolute(path).string()) {
    if (c == '%' || c == '?' || c == '#' || c < 0x20)
      out += fmt::format("%{:02X}", c);
    else
      out += static_cast<char>(c);
  }
  out += "?";
  out += query;
  return out;
}

}  // namespace

SqliteError::SqliteError(int sqliteCode, const std::string& message)
    : CodedError(exitCodeFor(sqliteCode), message), sqliteCode_(sqliteCode) {}

void checkSqlite(sqlite3* db, int rc, std::string_view what) {
  if (rc == SQLITE_OK || rc == SQLITE_ROW || rc == SQLITE_DONE) return;
  std::string detail = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  std::string file = db && sqlite3_db_filename(db, "main") ? sqlite3_db_filename(db, "main") : "";
  if (isDamage(rc))
    throw SqliteError(rc, fmt::format("{} is damaged or not a gemmtune database ({}: {}); it was not modified — "
                                      "move it away or restore a backup",
                                      file.empty() ? "the database" : file, what, detail));
  throw SqliteError(rc, fmt::format("{}: {}{}", what, detail, file.empty() ? "" : fmt::format(" ({})", file)));
}

// --- Statement -------------------------------------------------------------------------------

Statement::Statement(sqlite3* db, std::string_view sql) : db_(db) {
  int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt_);
    stmt_ = nullptr;
    checkSqlite(db_, rc, "preparing a statement");
  }
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement::Statement(Statement&& other) noexcept : db_(other.db_), stmt_(other.stmt_) { other.stmt_ = nullptr; }

Statement& Statement::bind(int index, std::int64_t value) {
  checkSqlite(db_, sqlite3_bind_int64(stmt_, index, value), "binding a parameter");
  return *this;
}

Statement& Statement::bind(int index, double value) {
  checkSqlite(db_, sqlite3_bind_double(stmt_, index, value), "binding a parameter");
  return *this;
}

Statement& Statement::bind(int index, std::string_view text) {
  checkSqlite(db_, sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8),
              "binding a parameter");
  return *this;
}

Statement& Statement::bindBlob(int index, std::string_view bytes) {
  checkSqlite(db_, sqlite3_bind_blob64(stmt_, index, bytes.data(), bytes.size(), SQLITE_TRANSIENT),
              "binding a parameter");
  return *this;
}

Statement& Statement::bindNull(int index) {
  checkSqlite(db_, sqlite3_bind_null(stmt_, index), "binding a parameter");
  return *this;
}

bool Statement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  checkSqlite(db_, rc, "running a statement");
  return false;
}

void Statement::run() {
  while (step()) {
  }
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

bool Statement::isNull(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
std::int64_t Statement::getInt64(int column) const { return sqlite3_column_int64(stmt_, column); }
double Statement::getDouble(int column) const { return sqlite3_column_double(stmt_, column); }

std::string Statement::getText(int column) const {
  const auto* p = sqlite3_column_text(stmt_, column);
  return p ? std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(stmt_, column)))
           : std::string();
}

std::string Statement::getBlob(int column) const {
  const auto* p = static_cast<const char*>(sqlite3_column_blob(stmt_, column));
  return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(stmt_, column))) : std::string();
}

std::optional<std::int64_t> Statement::getOptionalInt64(int column) const {
  if (isNull(column)) return std::nullopt;
  return getInt64(column);
}

std::optional<double> Statement::getOptionalDouble(int column) const {
  if (isNull(column)) return std::nullopt;
  return getDouble(column);
}

// --- Database --------------------------------------------------------------------------------

Database::Database(const std::filesystem::path& path, OpenOptions options)
    : path_(path), readOnly_(options.mode == OpenMode::ReadOnly) {
  std::error_code ec;
  // SQLite would open /dev/null or a FIFO and leave a "-journal" beside it (issue 13, defect 7).
  if (auto st = std::filesystem::status(path_, ec); std::filesystem::exists(st) && !std::filesystem::is_regular_file(st))
    throw IoError(fmt::format("{} is not a regular file; give --db a database file", path_.string()));
  if (readOnly_) {
    if (!std::filesystem::exists(path_, ec))
      throw IoError(fmt::format("no database at {}", path_.string()));
  } else if (path_.has_parent_path() && !std::filesystem::exists(path_.parent_path(), ec)) {
    std::filesystem::create_directories(path_.parent_path(), ec);
    if (ec)
      throw IoError(fmt::format("cannot create directory {} for the database: {}", path_.parent_path().string(),
                                ec.message()));
  }
  try {
    openConnection(false);
    sqlite3_busy_timeout(db_, options.busyTimeoutMs);
    try {
      queryInt("SELECT count(*) FROM sqlite_master");
    } catch (const SqliteError& e) {
      // A WAL database in a directory we cannot write needs its -shm file; without writers
      // around, reading it as immutable is safe.
      // Depending on which of -wal and -shm exist, SQLite says "unable to open" or "attempt to
      // write a readonly database" (issue 13, defect 3).
      const int primary = e.sqliteCode() & 0xff;
      if (!readOnly_ || (primary != SQLITE_CANTOPEN && primary != SQLITE_READONLY)) throw;
      logger()->debug("{}: cannot create the WAL index, reading it as immutable", path_.string());
      sqlite3_close_v2(db_);
      db_ = nullptr;
      openConnection(true);
      queryInt("SELECT count(*) FROM sqlite_master");
    }
    verifyOnOpen(options);
  } catch (...) {
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw;
  }
}

Database::~Database() {
  // Close never throws here: pending statements belong to callers, and close_v2 defers.
  sqlite3_close_v2(db_);
}

void Database::openConnection(bool immutable) {
  int flags = SQLITE_OPEN_NOMUTEX | (readOnly_ ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  std::string name = path_.string();
  if (immutable) {
    flags |= SQLITE_OPEN_URI;
    name = fileUri(path_, "immutable=1");
  }
  int rc = sqlite3_open_v2(name.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string detail = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw SqliteError(rc, fmt::format("cannot open database {}: {}", path_.string(), detail));
  }
  sqlite3_extended_result_codes(db_, 1);
  if (!readOnly_ && sqlite3_db_readonly(db_, "main") == 1)
    throw IoError(fmt::format("database {} is read-only; writing commands need write access to it and its "
                              "directory (queries still work)",
                              path_.string()));
}

namespace {

bool isBusy(const SqliteError& e) {
  const int primary = e.sqliteCode() & 0xff;
  return primary == SQLITE_BUSY || primary == SQLITE_LOCKED;
}

// Some steps of opening return SQLITE_BUSY without consulting the busy handler: switching the
// journal mode while another process holds a lock, or a read transaction that another process's
// first write overtakes. Each such step is retried for as long as the busy timeout allows.
template <class Step>
auto retryWhileBusy(int timeoutMs, Step&& step) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
  for (int attempt = 0;; ++attempt) {
    try {
      return step();
    } catch (const SqliteError& e) {
      if (!isBusy(e) || std::chrono::steady_clock::now() > deadline) throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min(50, 2 << std::min(attempt, 5))));
    }
  }
}

}  // namespace

void Database::verifyOnOpen(const OpenOptions& options) {
  // One read transaction, so that a concurrent first-time creation is seen entirely or not at
  // all (never tables without their application_id).
  SchemaState state = retryWhileBusy(options.busyTimeoutMs, [&] {
    Transaction read(*this, Transaction::Kind::Read);
    SchemaState st = readSchemaState(*this);
    read.commit();
    return st;
  });
  hasSchema_ = !state.empty;
  if (state.foreign)
    throw DataError(fmt::format("{} is a SQLite database of another program (application_id {:#x}); it was not "
                                "modified — use a different --db path",
                                path_.string(), state.applicationId));
  if (state.version > kSchemaVersion)
    throw DataError(fmt::format("{} has schema version {}, newer than this gemmtune understands ({}); upgrade "
                                "gemmtune or use a different --db path",
                                path_.string(), state.version, kSchemaVersion));
  if (!state.empty && options.check == OpenCheck::Quick) {
    std::string check;
    auto st = prepare("PRAGMA quick_check(1)");
    if (st.step()) check = st.getText(0);
    if (check != "ok")
      throw DataError(fmt::format("{} is damaged ({}); it was not modified — move it away or restore a backup",
                                  path_.string(), check));
  }
  if (readOnly_) {
    if (!state.empty && state.version < kSchemaVersion && !readAsCurrentSchema(*this, state.version))
      throw DataError(fmt::format("{} has the older schema version {}; open it once with write access (e.g. "
                                  "gemmtune import or tune) to upgrade it to {}",
                                  path_.string(), state.version, kSchemaVersion));
    return;
  }
  if (!options.migrate && !state.empty && state.version < kSchemaVersion)
    throw DataError(fmt::format("{} has the older schema version {}; a gemmtune command that writes (tune, "
                                "import) upgrades it to {}",
                                path_.string(), state.version, kSchemaVersion));
  // WAL lets readers run during a tuning run; a persistent setting stored in the file.
  retryWhileBusy(options.busyTimeoutMs, [&] {
    auto mode = prepare("PRAGMA journal_mode=WAL");
    if (mode.step() && mode.getText(0) != "wal")
      logger()->debug("{}: WAL is not available here, using journal mode {}", path_.string(), mode.getText(0));
  });
  exec("PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON");
  retryWhileBusy(options.busyTimeoutMs, [&] { migrateSchema(*this); });
  hasSchema_ = true;
}

void Database::exec(std::string_view sql) {
  std::string text(sql);
  char* message = nullptr;
  int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &message);
  sqlite3_free(message);
  checkSqlite(db_, rc, "running SQL");
}

std::int64_t Database::queryInt(std::string_view sql) const {
  auto st = prepare(sql);
  return st.step() ? st.getInt64(0) : 0;
}

std::string Database::integrityCheck() const {
  std::string out;
  auto st = prepare("PRAGMA integrity_check");
  while (st.step()) out += (out.empty() ? "" : "\n") + st.getText(0);
  return out;
}

void Database::backupTo(const std::filesystem::path& target) const {
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::symlink_status(target, ec)))
    throw UsageError(fmt::format("{} exists; choose a new file for the backup", target.string()));
  // The copy is made under a temporary name and renamed when complete: an interrupted or failed
  // backup leaves neither a partial file nor its journal (issue 13, defect 7).
  std::filesystem::path tmp = target;
  tmp += fmt::format(".tmp{}", ::getpid());
  std::filesystem::path tmpJournal = tmp;
  tmpJournal += "-journal";
  PendingFile pendingCopy(tmp), pendingJournal(tmpJournal);
  sqlite3* dest = nullptr;
  auto fail = [&](int rc, const std::string& what, const std::string& detail) {
    sqlite3_close_v2(dest);
    throw SqliteError(rc, fmt::format("backup to {} failed ({}): {}", target.string(), what, detail));
  };
  int rc = sqlite3_open_v2(tmp.string().c_str(), &dest, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                           nullptr);
  if (rc != SQLITE_OK) fail(SQLITE_CANTOPEN, "cannot create it", sqlite3_errstr(rc));
  sqlite3_backup* backup = sqlite3_backup_init(dest, "main", db_, "main");
  if (!backup) fail(SQLITE_IOERR, "cannot start", sqlite3_errmsg(dest));
  // -1: all pages in one step, so the copy is one consistent snapshot even while others write.
  rc = sqlite3_backup_step(backup, -1);
  sqlite3_backup_finish(backup);
  if (rc != SQLITE_DONE) fail(rc, "copying", sqlite3_errstr(rc));
  // The copy inherits WAL mode; leave a single self-contained file behind.
  rc = sqlite3_exec(dest, "PRAGMA journal_mode=DELETE", nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) fail(rc, "finishing", sqlite3_errmsg(dest));
  rc = sqlite3_close(dest);
  dest = nullptr;
  if (rc != SQLITE_OK) fail(rc, "closing", sqlite3_errstr(rc));
  // Never over a file that appeared meanwhile: link() fails if the target exists.
  if (::link(tmp.c_str(), target.c_str()) != 0)
    throw IoError(fmt::format("cannot write the backup to {}: {}", target.string(), std::strerror(errno)));
}

// --- Transaction -----------------------------------------------------------------------------

Transaction::Transaction(Database& db, Kind kind) : db_(db) {
  db_.exec(kind == Kind::Write ? "BEGIN IMMEDIATE" : "BEGIN");
}

Transaction::~Transaction() {
  if (!done_) sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  db_.exec("COMMIT");
  done_ = true;
}

}  // namespace gemmtune::db
