// SqlStore's writes of measurements: result and baseline upserts (a row is replaced only by a
// later measurement), recording them for a run, and merging an imported batch. Part of
// SqlStoreImpl.hpp (included only by the files that instantiate SqlStore).
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "Clock.hpp"
#include "Quote.hpp"
#include "SqlStore.hpp"
#include "SqlStoreColumns.hpp"

namespace gemmtune::db {

// Both upserts return a row only when they wrote one: `RETURNING` yields nothing when the
// stored measurement is as late or later.
template <class Conn, class Tx>
auto SqlStore<Conn, Tx>::resultUpsert() -> Statement {
  using namespace sqlstore;
  std::string updates;
  for (auto c : kResultColumns) updates += fmt::format("{}{} = excluded.{}", updates.empty() ? "" : ", ", c, c);
  return db_.prepare(fmt::format(
      "INSERT INTO results (run_id, gpu_id, cache_key, {}) VALUES ({}) "
      "ON CONFLICT (cache_key) DO UPDATE SET run_id = excluded.run_id, gpu_id = excluded.gpu_id, {} "
      "WHERE excluded.measured_at > results.measured_at RETURNING 1",
      joined("", true), placeholders(3 + kResultColumns.size()), updates));
}

template <class Conn, class Tx>
bool SqlStore<Conn, Tx>::upsertResult(Statement& st, std::int64_t runId, std::int64_t gpuId, const ResultRecord& r) {
  using namespace sqlstore;
  st.bind(1, runId).bind(2, gpuId).bind(3, r.key.hash());
  bindResult(st, 4, r);
  bool written = st.step();
  st.run();
  st.reset();
  return written;
}

template <class Conn, class Tx>
bool SqlStore<Conn, Tx>::upsertResult(std::int64_t runId, std::int64_t gpuId, const ResultRecord& r) {
  Statement st = resultUpsert();
  return upsertResult(st, runId, gpuId, r);
}

template <class Conn, class Tx>
bool SqlStore<Conn, Tx>::upsertBaseline(std::int64_t runId, std::int64_t gpuId, const BaselineRecord& b) {
  const auto& p = b.problem;
  if (std::string why = problemKeyProblem(p); !why.empty())
    throw DataError(fmt::format("baseline {} {}x{}x{}: {}", b.library, p.m, p.n, p.k, why));
  if (!(b.medianMs > 0) || !std::isfinite(b.medianMs))
    throw DataError(fmt::format("baseline {} {}x{}x{}: needs a positive median time", b.library, p.m, p.n, p.k));
  auto st = db_.prepare(
      "INSERT INTO baselines (run_id, gpu_id, library, library_version, m, n, k, layout, batch, beta_class, "
      "median_ms, gflops, measured_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
      "ON CONFLICT (gpu_id, library, library_version, m, n, k, layout, batch, beta_class) DO UPDATE SET "
      "run_id = excluded.run_id, median_ms = excluded.median_ms, gflops = excluded.gflops, "
      "measured_at = excluded.measured_at WHERE excluded.measured_at > baselines.measured_at RETURNING 1");
  sqlstore::ParamBinder bind(st, 1);
  bind(runId)(gpuId)(b.library)(b.libraryVersion).problem(p);
  bind(b.medianMs)(b.gflops > 0 ? b.gflops : gflopsOf(p, b.medianMs));
  bind(b.measuredAt.empty() ? utcTimestamp() : b.measuredAt);
  bool written = st.step();
  st.run();
  return written;
}

template <class Conn, class Tx>
bool SqlStore<Conn, Tx>::recordResult(std::int64_t runId, const ResultRecord& r) {
  return recordResults(runId, std::span<const ResultRecord>(&r, 1)) == 1;
}

template <class Conn, class Tx>
std::size_t SqlStore<Conn, Tx>::recordResults(std::int64_t runId, std::span<const ResultRecord> records) {
  if (records.empty()) return 0;
  for (const auto& r : records) validateResult(r);
  // A record without a time is stamped once, so a retry after a lost commit is a tie, not a
  // second (later) measurement.
  std::vector<ResultRecord> stamped;
  for (const auto& r : records)
    if (r.measuredAt.empty()) {
      stamped.assign(records.begin(), records.end());
      for (auto& s : stamped)
        if (s.measuredAt.empty()) s.measuredAt = utcTimestamp();
      records = stamped;
      break;
    }
  return retried([&] {
    Tx tx(db_);
    const auto [gpuId, fingerprint] = gpuOfRun(runId);
    std::size_t written = 0;
    Statement upsert = resultUpsert();
    for (const auto& r : records) {
      if (r.key.gpuFingerprint != fingerprint)
        throw UsageError(fmt::format("result for '{}' names another GPU than run {}", r.instance(), runId));
      written += upsertResult(upsert, runId, gpuId, r) ? 1 : 0;
    }
    tx.commit();
    return written;
  });
}

template <class Conn, class Tx>
bool SqlStore<Conn, Tx>::recordBaseline(std::int64_t runId, const BaselineRecord& b) {
  BaselineRecord stamped = b;
  if (stamped.measuredAt.empty()) stamped.measuredAt = utcTimestamp();
  return retried([&] {
    Tx tx(db_);
    bool written = upsertBaseline(runId, gpuOfRun(runId).first, stamped);
    tx.commit();
    return written;
  });
}

template <class Conn, class Tx>
MergeSummary SqlStore<Conn, Tx>::mergeBatch(const RecordBatch& batch) {
  // Every reference is checked before the transaction, so a bad batch writes nothing.
  auto bad = [&](const std::string& what) {
    throw DataError(fmt::format("{}; nothing was written to {}", what, location_));
  };
  for (const auto& run : batch.runs) {
    auto g = batch.runGpu.find(run.uid);
    if (run.uid.empty() || g == batch.runGpu.end() || !batch.gpus.count(g->second))
      bad(fmt::format("run {} names no GPU of the batch", quoteInput(run.uid)));
  }
  for (const auto& r : batch.results) {
    validateResult(r.record);
    auto g = batch.runGpu.find(r.runUid);
    if (g == batch.runGpu.end()) bad(fmt::format("a result names run {}, not in the batch", quoteInput(r.runUid)));
    if (g->second != r.record.key.gpuFingerprint)
      bad(fmt::format("result {} names another GPU than its run", quoteInput(r.record.instance())));
  }
  for (const auto& b : batch.baselines) {
    auto g = batch.runGpu.find(b.runUid);
    if (g == batch.runGpu.end() || g->second != b.gpuFingerprint)
      bad(fmt::format("a baseline names run {} of another GPU or not in the batch", quoteInput(b.runUid)));
  }
  return retried([&] {
    MergeSummary summary;
    Tx tx(db_);
    auto count = [&](const char* table) {
      auto st = db_.prepare(fmt::format("SELECT count(*) FROM {}", table));
      st.step();
      std::size_t n = static_cast<std::size_t>(st.getInt64(0));
      st.run();
      return n;
    };
    const std::size_t gpusBefore = count("gpus"), runsBefore = count("runs");
    std::map<std::string, std::int64_t> gpuIds, runIds;
    for (const auto& [fingerprint, g] : batch.gpus) gpuIds[fingerprint] = upsertGpu(g.spec, g.firstSeen);
    for (const auto& run : batch.runs) runIds[run.uid] = insertRun(gpuIds.at(batch.runGpu.at(run.uid)), run);
    Statement upsert = resultUpsert();
    for (const auto& r : batch.results) {
      bool written = upsertResult(upsert, runIds.at(r.runUid), gpuIds.at(r.record.key.gpuFingerprint), r.record);
      ++(written ? summary.resultsWritten : summary.resultsUnchanged);
    }
    for (const auto& b : batch.baselines) {
      bool written = upsertBaseline(runIds.at(b.runUid), gpuIds.at(b.gpuFingerprint), b.record);
      ++(written ? summary.baselinesWritten : summary.baselinesUnchanged);
    }
    summary.gpusAdded = count("gpus") - gpusBefore;
    summary.runsAdded = count("runs") - runsBefore;
    tx.commit();
    return summary;
  });
}

}  // namespace gemmtune::db
