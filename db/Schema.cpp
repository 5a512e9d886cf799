#include "Schema.hpp"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <utility>

#include "Database.hpp"
#include "Log.hpp"

namespace gemmtune::db {

namespace {

// Append only: a released migration is never edited, a change is a new entry.
constexpr std::array kMigrations = {
    Migration{1, R"sql(
CREATE TABLE gpus (
  id                      INTEGER PRIMARY KEY,
  fingerprint             TEXT NOT NULL UNIQUE,
  name                    TEXT NOT NULL,
  profile                 TEXT NOT NULL DEFAULT '',
  cc_major                INTEGER NOT NULL,
  cc_minor                INTEGER NOT NULL,
  sm_count                INTEGER NOT NULL,
  max_threads_per_block   INTEGER NOT NULL,
  max_threads_per_sm      INTEGER NOT NULL,
  max_blocks_per_sm       INTEGER NOT NULL,
  warp_size               INTEGER NOT NULL,
  regs_per_sm             INTEGER NOT NULL,
  regs_per_block          INTEGER NOT NULL,
  max_regs_per_thread     INTEGER NOT NULL,
  reg_alloc_unit          INTEGER NOT NULL,
  smem_per_sm             INTEGER NOT NULL,
  smem_per_block          INTEGER NOT NULL,
  smem_per_block_optin    INTEGER NOT NULL,
  smem_reserved_per_block INTEGER NOT NULL,
  l2_bytes                INTEGER NOT NULL,
  mem_clock_khz           INTEGER NOT NULL,
  mem_bus_width_bits      INTEGER NOT NULL,
  clock_khz               INTEGER NOT NULL,
  total_mem_bytes         INTEGER NOT NULL,
  first_seen              TEXT NOT NULL
);

CREATE TABLE runs (
  id             INTEGER PRIMARY KEY,
  uid            TEXT NOT NULL UNIQUE,
  gpu_id         INTEGER NOT NULL REFERENCES gpus(id),
  gpu_uuid       TEXT NOT NULL DEFAULT '',
  started_at     TEXT NOT NULL,
  ended_at       TEXT,
  tool_version   TEXT NOT NULL,
  driver_version INTEGER NOT NULL,
  nvrtc_version  TEXT NOT NULL,
  command_line   TEXT NOT NULL,
  host           TEXT NOT NULL
);

CREATE TABLE results (
  id                 INTEGER PRIMARY KEY,
  run_id             INTEGER NOT NULL REFERENCES runs(id),
  gpu_id             INTEGER NOT NULL REFERENCES gpus(id),
  cache_key          TEXT NOT NULL UNIQUE,
  family             TEXT NOT NULL,
  instance           TEXT NOT NULL,
  params             TEXT NOT NULL,
  m                  INTEGER NOT NULL,
  n                  INTEGER NOT NULL,
  k                  INTEGER NOT NULL,
  layout             TEXT NOT NULL,
  beta_class         TEXT NOT NULL,
  status             TEXT NOT NULL,
  status_reason      TEXT NOT NULL DEFAULT '',
  error_text         TEXT NOT NULL DEFAULT '',
  median_ms          REAL,
  min_ms             REAL,
  spread             REAL,
  reps               INTEGER,
  partial            INTEGER NOT NULL DEFAULT 0,
  gflops             REAL,
  max_error          REAL,
  sm_clock_mhz       INTEGER,
  threads_per_block  INTEGER,
  registers          INTEGER,
  static_smem_bytes  INTEGER,
  dynamic_smem_bytes INTEGER,
  stack_frame_bytes  INTEGER,
  spill_store_bytes  INTEGER,
  spill_load_bytes   INTEGER,
  occupancy          REAL,
  limiter            TEXT NOT NULL DEFAULT '',
  arch               TEXT NOT NULL,
  compile_options    TEXT NOT NULL,
  source_hash        TEXT NOT NULL,
  driver_version     INTEGER NOT NULL,
  nvrtc_version      TEXT NOT NULL,
  method_version     TEXT NOT NULL,
  lowered_name       TEXT NOT NULL DEFAULT '',
  cubin              BLOB,
  measured_at        TEXT NOT NULL
);
-- best(): the ok rows of one GPU at one size; also yields the distinct measured sizes.
CREATE INDEX results_by_size ON results(gpu_id, status, m, n, k, layout, beta_class, gflops DESC);
CREATE INDEX results_by_run ON results(run_id);

CREATE TABLE baselines (
  id              INTEGER PRIMARY KEY,
  run_id          INTEGER NOT NULL REFERENCES runs(id),
  gpu_id          INTEGER NOT NULL REFERENCES gpus(id),
  library         TEXT NOT NULL,
  library_version TEXT NOT NULL,
  m               INTEGER NOT NULL,
  n               INTEGER NOT NULL,
  k               INTEGER NOT NULL,
  layout          TEXT NOT NULL,
  beta_class      TEXT NOT NULL,
  median_ms       REAL NOT NULL,
  gflops          REAL NOT NULL,
  measured_at     TEXT NOT NULL,
  UNIQUE (gpu_id, library, library_version, m, n, k, layout, beta_class)
);
)sql", nullptr},
    // Issue 27: a problem's batch count. Existing rows are single products (batch 1); their cache
    // keys stay valid (CacheKey::hash leaves batch 1 out). SQLite cannot change a table's UNIQUE
    // constraint in place, so baselines are copied into a new table (new ids, in the old order).
    Migration{2, R"sql(
ALTER TABLE results ADD COLUMN batch INTEGER NOT NULL DEFAULT 1;
DROP INDEX results_by_size;
CREATE INDEX results_by_size ON results(gpu_id, status, m, n, k, layout, batch, beta_class, gflops DESC);

CREATE TABLE baselines_v2 (
  id              INTEGER PRIMARY KEY,
  run_id          INTEGER NOT NULL REFERENCES runs(id),
  gpu_id          INTEGER NOT NULL REFERENCES gpus(id),
  library         TEXT NOT NULL,
  library_version TEXT NOT NULL,
  m               INTEGER NOT NULL,
  n               INTEGER NOT NULL,
  k               INTEGER NOT NULL,
  layout          TEXT NOT NULL,
  beta_class      TEXT NOT NULL,
  median_ms       REAL NOT NULL,
  gflops          REAL NOT NULL,
  measured_at     TEXT NOT NULL,
  batch           INTEGER NOT NULL DEFAULT 1,
  UNIQUE (gpu_id, library, library_version, m, n, k, layout, batch, beta_class)
);
INSERT INTO baselines_v2 (run_id, gpu_id, library, library_version, m, n, k, layout, beta_class, median_ms, gflops,
                          measured_at)
  SELECT run_id, gpu_id, library, library_version, m, n, k, layout, beta_class, median_ms, gflops, measured_at
  FROM baselines ORDER BY id;
DROP TABLE baselines;
ALTER TABLE baselines_v2 RENAME TO baselines;
)sql",
              // A schema-1 file opened read-only (a deployed snapshot in a read-only directory)
              // reads as schema 2 through views of this connection only; the file is not written.
              R"sql(
CREATE TEMP VIEW results AS SELECT *, 1 AS batch FROM main.results;
CREATE TEMP VIEW baselines AS SELECT *, 1 AS batch FROM main.baselines;
)sql"},
    // Issue 28: the problems the library served without an exact row (a nearest size or the
    // built-in default), how often and for how long, so `gemmtune seen` can list them and
    // `tune --seen` tune them. One row per GPU and problem; the library adds to it.
    Migration{3, R"sql(
CREATE TABLE seen (
  id         INTEGER PRIMARY KEY,
  gpu_id     INTEGER NOT NULL REFERENCES gpus(id),
  m          INTEGER NOT NULL,
  n          INTEGER NOT NULL,
  k          INTEGER NOT NULL,
  layout     TEXT NOT NULL,
  batch      INTEGER NOT NULL,
  beta_class TEXT NOT NULL,
  calls      INTEGER NOT NULL,
  time_ms    REAL NOT NULL,
  first_seen TEXT NOT NULL,
  last_seen  TEXT NOT NULL,
  UNIQUE (gpu_id, m, n, k, layout, batch, beta_class)
);
)sql",
              // An older file opened read-only has recorded nothing: an empty table of this
              // connection only (a TEMP table, since a view cannot name the columns' types).
              R"sql(
CREATE TEMP TABLE seen (
  id INTEGER PRIMARY KEY, gpu_id INTEGER NOT NULL, m INTEGER NOT NULL, n INTEGER NOT NULL, k INTEGER NOT NULL,
  layout TEXT NOT NULL, batch INTEGER NOT NULL, beta_class TEXT NOT NULL, calls INTEGER NOT NULL,
  time_ms REAL NOT NULL, first_seen TEXT NOT NULL, last_seen TEXT NOT NULL
);
)sql"},
};

static_assert(kMigrations.back().toVersion == kSchemaVersion, "kSchemaVersion must name the last migration");

}  // namespace

std::span<const Migration> schemaMigrations() { return kMigrations; }

std::string postgresSql(std::string_view sqliteSql) {
  // Whole words only, longest first: the column types and SQLite's rowid primary key.
  static constexpr std::pair<std::string_view, std::string_view> kTypes[] = {
      {"INTEGER PRIMARY KEY", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"},
      {"INTEGER", "BIGINT"},
      {"REAL", "DOUBLE PRECISION"},
      {"BLOB", "BYTEA"},
      {"TEXT", "TEXT COLLATE \"C\""},  // byte order, as SQLite compares
      // SQLite sorts NULL lowest, so its DESC puts NULLs last; PostgreSQL's puts them first. An
      // index in SQLite's order serves the lookup's ORDER BY ... DESC NULLS LAST ... LIMIT.
      {"DESC", "DESC NULLS LAST"},
  };
  auto isWord = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::string out;
  for (std::size_t i = 0; i < sqliteSql.size();) {
    bool replaced = false;
    if (i == 0 || !isWord(sqliteSql[i - 1])) {
      for (const auto& [from, to] : kTypes) {
        std::size_t end = i + from.size();
        if (sqliteSql.substr(i, from.size()) == from && (end == sqliteSql.size() || !isWord(sqliteSql[end]))) {
          out += to;
          i = end;
          replaced = true;
          break;
        }
      }
    }
    if (!replaced) out += sqliteSql[i++];
  }
  return out;
}

SchemaState readSchemaState(const Database& db) {
  SchemaState s;
  s.applicationId = db.queryInt("PRAGMA application_id");
  s.version = static_cast<int>(db.queryInt("PRAGMA user_version"));
  std::int64_t objects = db.queryInt("SELECT count(*) FROM sqlite_master");
  s.empty = s.applicationId == 0 && s.version == 0 && objects == 0;
  s.foreign = !s.empty && s.applicationId != kApplicationId;
  return s;
}

bool readAsCurrentSchema(Database& db, int version) {
  for (const auto& m : kMigrations)
    if (m.toVersion > version && !m.readOnlyViews) return false;
  for (const auto& m : kMigrations)
    if (m.toVersion > version) db.exec(m.readOnlyViews);
  return true;
}

void migrateSchema(Database& db) {
  Transaction tx(db);
  // Read again under the write lock: another process may have migrated meanwhile.
  SchemaState s = readSchemaState(db);
  if (s.foreign || s.version > kSchemaVersion)
    throw DataError(fmt::format("{} changed while opening it: it is not a gemmtune database of schema {}",
                                db.path().string(), kSchemaVersion));
  if (s.version == kSchemaVersion) return;  // rolls back an empty transaction
  for (const auto& m : kMigrations) {
    if (m.toVersion <= s.version) continue;
    logger()->debug("{}: migrating the schema to version {}", db.path().string(), m.toVersion);
    db.exec(m.sql);
  }
  // PRAGMA takes no bound parameters; both values are compile-time constants.
  db.exec(fmt::format("PRAGMA application_id = {}; PRAGMA user_version = {}", kApplicationId, kSchemaVersion));
  tx.commit();
}

}  // namespace gemmtune::db
