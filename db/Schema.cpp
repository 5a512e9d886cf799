#include "Schema.hpp"

#include <fmt/format.h>

#include <array>

#include "Database.hpp"
#include "Log.hpp"

namespace gemmtune::db {

namespace {

struct Migration {
  int toVersion;
  const char* sql;
};

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
)sql"},
};

static_assert(kMigrations.back().toVersion == kSchemaVersion, "kSchemaVersion must name the last migration");

}  // namespace

SchemaState readSchemaState(const Database& db) {
  SchemaState s;
  s.applicationId = db.queryInt("PRAGMA application_id");
  s.version = static_cast<int>(db.queryInt("PRAGMA user_version"));
  std::int64_t objects = db.queryInt("SELECT count(*) FROM sqlite_master");
  s.empty = s.applicationId == 0 && s.version == 0 && objects == 0;
  s.foreign = !s.empty && s.applicationId != kApplicationId;
  return s;
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
