// A results store as gemmtune wrote it before batches (schema 1: no `batch` column), built by hand
// for the migration tests: schema 1's DDL is migration 1 (a released migration is never edited),
// and its rows are inserted as plain SQL, ids left to the database as the old code left them. The
// rows are one GPU, one ended run, ok results (no cubin) and one cuBLAS baseline per result size.
#pragma once

#include <fmt/format.h>
#include <sqlite3.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "ResultStore.hpp"
#include "Schema.hpp"
#include "pg_server.hpp"

namespace gemmtune::test {

inline std::string sqlText(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

template <class T>
std::string sqlOr(const std::optional<T>& v) {
  return v ? fmt::format("{}", *v) : std::string("NULL");
}

inline std::string schemaV1Gpu(const GpuSpec& g) {
  return fmt::format(
      "INSERT INTO gpus (fingerprint, name, profile, cc_major, cc_minor, sm_count, max_threads_per_block, "
      "max_threads_per_sm, max_blocks_per_sm, warp_size, regs_per_sm, regs_per_block, max_regs_per_thread, "
      "reg_alloc_unit, smem_per_sm, smem_per_block, smem_per_block_optin, smem_reserved_per_block, l2_bytes, "
      "mem_clock_khz, mem_bus_width_bits, clock_khz, total_mem_bytes, first_seen) VALUES ({}, {}, {}, {}, {}, {}, "
      "{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, '2025-01-01T00:00:00.000000Z');\n",
      sqlText(db::gpuFingerprint(g)), sqlText(g.name), sqlText(g.profile), g.ccMajor, g.ccMinor, g.smCount,
      g.maxThreadsPerBlock, g.maxThreadsPerSm, g.maxBlocksPerSm, g.warpSize, g.regsPerSm, g.regsPerBlock,
      g.maxRegsPerThread, g.regAllocUnit, g.smemPerSm, g.smemPerBlock, g.smemPerBlockOptin, g.smemReservedPerBlock,
      g.l2Bytes, g.memClockKhz, g.memBusWidthBits, g.clockKhz, g.totalMemBytes);
}

inline std::string schemaV1Result(const db::ResultRecord& r, const std::string& gpu, const std::string& run) {
  const auto& p = r.key.problem;
  return fmt::format(
      "INSERT INTO results (run_id, gpu_id, cache_key, family, instance, params, m, n, k, layout, beta_class, status, "
      "median_ms, min_ms, spread, reps, gflops, max_error, sm_clock_mhz, threads_per_block, registers, "
      "static_smem_bytes, dynamic_smem_bytes, occupancy, limiter, arch, compile_options, source_hash, driver_version, "
      "nvrtc_version, method_version, lowered_name, measured_at) VALUES ({}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, "
      "{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {});\n",
      run, gpu, sqlText(r.key.hash()), sqlText(r.family), sqlText(r.instance()), sqlText(r.params), p.m, p.n, p.k,
      sqlText(p.layout), sqlText(p.betaClass), sqlText(r.status), sqlOr(r.medianMs), sqlOr(r.minMs), sqlOr(r.spread),
      sqlOr(r.reps), sqlOr(r.gflops), sqlOr(r.maxError), sqlOr(r.smClockMHz), sqlOr(r.threadsPerBlock),
      sqlOr(r.registers), sqlOr(r.staticSmemBytes), sqlOr(r.dynamicSmemBytes), sqlOr(r.occupancy),
      sqlText(r.limiter), sqlText(r.key.arch), sqlText(r.key.compileOptions), sqlText(r.key.sourceHash),
      r.key.driverVersion, sqlText(r.key.nvrtcVersion), sqlText(r.key.methodVersion), sqlText(r.loweredName),
      sqlText(r.measuredAt));
}

// The rows of `results` (all ok, batch 1, on `gpu`) with a cuBLAS baseline of `baselineMs` at each
// one's size, in SQL both backends run (the values are not passed through postgresSql()).
inline std::string schemaV1Rows(const GpuSpec& gpu, const std::vector<db::ResultRecord>& results, double baselineMs) {
  const std::string gpuId = fmt::format("(SELECT id FROM gpus WHERE fingerprint = {})", sqlText(db::gpuFingerprint(gpu)));
  const std::string runId = "(SELECT id FROM runs WHERE uid = 'run-v1')";
  std::string sql = schemaV1Gpu(gpu);
  sql += fmt::format(
      "INSERT INTO runs (uid, gpu_id, gpu_uuid, started_at, ended_at, tool_version, driver_version, nvrtc_version, "
      "command_line, host) VALUES ('run-v1', {}, 'GPU-1234', '2025-01-01T00:00:00.000000Z', "
      "'2025-01-01T01:00:00.000000Z', '0.9', 13000, '13.0', 'gemmtune tune', 'oldhost');\n",
      gpuId);
  for (const auto& r : results) {
    const auto& p = r.key.problem;
    sql += schemaV1Result(r, gpuId, runId);
    sql += fmt::format(
        "INSERT INTO baselines (run_id, gpu_id, library, library_version, m, n, k, layout, beta_class, median_ms, "
        "gflops, measured_at) VALUES ({}, {}, 'cublas', '12.9', {}, {}, {}, 'nn', 'any', {}, {}, "
        "'2025-01-01T00:30:00.000000Z');\n",
        runId, gpuId, p.m, p.n, p.k, baselineMs, db::gflopsOf(p, baselineMs));
  }
  return sql;
}

inline std::string schemaV1Ddl() {
  const auto& first = db::schemaMigrations().front();
  if (first.toVersion != 1) throw std::logic_error("migration 1 is not the first migration");
  return first.sql;
}

// A schema-1 SQLite file at `path` holding `rows` (SQLite SQL), in rollback-journal mode as a
// snapshot is.
inline void writeSchemaV1Sqlite(const std::filesystem::path& path, const std::string& rows) {
  sqlite3* raw = nullptr;
  if (sqlite3_open(path.c_str(), &raw) != SQLITE_OK) throw std::runtime_error("cannot create " + path.string());
  std::string sql = schemaV1Ddl() + rows +
                    fmt::format("PRAGMA application_id = {}; PRAGMA user_version = 1;", db::kApplicationId);
  char* error = nullptr;
  int rc = sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, &error);
  std::string message = error ? error : "";
  sqlite3_free(error);
  sqlite3_close(raw);
  if (rc != SQLITE_OK) throw std::runtime_error("schema 1 SQL failed: " + message);
}

// Schema 1 with `rows` in database `db` of `server`, its metadata as gemmtune wrote it then.
inline void writeSchemaV1Postgres(const PgServer& server, const std::string& db, const std::string& rows) {
  server.psql(db, db::postgresSql(schemaV1Ddl()) +
                      "CREATE TABLE gemmtune_meta (application_id BIGINT NOT NULL, schema_version INTEGER NOT NULL);\n" +
                      fmt::format("INSERT INTO gemmtune_meta VALUES ({}, 1);\n", db::kApplicationId) + rows);
}

}  // namespace gemmtune::test
