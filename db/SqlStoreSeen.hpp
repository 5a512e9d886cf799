// SqlStore's record of the problems the library served without an exact row (table `seen`):
// adding calls and time to a problem's row, listing and clearing them. Part of SqlStoreImpl.hpp
// (included only by the files that instantiate SqlStore).
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "Clock.hpp"
#include "SqlStore.hpp"
#include "SqlStoreColumns.hpp"

namespace gemmtune::db {

template <class Conn, class Tx>
void SqlStore<Conn, Tx>::recordSeen(const GpuSpec& gpu, std::span<const SeenRecord> records) {
  for (const auto& r : records) {
    const auto& p = r.problem;
    if (std::string why = problemKeyProblem(p); !why.empty())
      throw DataError(fmt::format("seen problem {}x{}x{}: {}", p.m, p.n, p.k, why));
    if (r.calls < 1 || !(r.timeMs >= 0) || !std::isfinite(r.timeMs))
      throw DataError(fmt::format("seen problem {}x{}x{}: needs at least one call and a finite time (got {} calls, "
                                  "{} ms)",
                                  p.m, p.n, p.k, r.calls, r.timeMs));
  }
  if (records.empty()) return;
  const std::string now = utcTimestamp();
  Tx tx(db_);
  const std::int64_t gpuId = upsertGpu(gpu, {});
  auto st = db_.prepare(
      "INSERT INTO seen (gpu_id, m, n, k, layout, batch, beta_class, calls, time_ms, first_seen, last_seen) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (gpu_id, m, n, k, layout, batch, beta_class) DO UPDATE "
      "SET calls = seen.calls + excluded.calls, time_ms = seen.time_ms + excluded.time_ms, "
      "last_seen = excluded.last_seen");
  for (const auto& r : records) {
    sqlstore::ParamBinder(st, 1)(gpuId).problem(r.problem)(r.calls)(r.timeMs)(now)(now);
    st.run();
    st.reset();
  }
  tx.commit();
}

template <class Conn, class Tx>
std::size_t SqlStore<Conn, Tx>::clearSeen(std::optional<std::int64_t> gpuId) {
  return retried([&] {
    Tx tx(db_);
    auto st = db_.prepare(gpuId ? "DELETE FROM seen WHERE gpu_id = ? RETURNING 1" : "DELETE FROM seen RETURNING 1");
    if (gpuId) st.bind(1, *gpuId);
    std::size_t removed = 0;
    while (st.step()) ++removed;
    tx.commit();
    return removed;
  });
}

template <class Conn, class Tx>
std::vector<StoredSeen> SqlStore<Conn, Tx>::seen(const SeenFilter& f) const {
  return retried([&] {
    auto st = db_.prepare(fmt::format(
        "SELECT s.gpu_id, g.fingerprint, g.name, s.m, s.n, s.k, s.layout, s.batch, s.beta_class, s.calls, s.time_ms, "
        "s.first_seen, s.last_seen FROM seen s JOIN gpus g ON g.id = s.gpu_id {} "
        "ORDER BY s.time_ms DESC, s.calls DESC, s.gpu_id, s.m, s.n, s.k, s.layout, s.batch, s.beta_class{}",
        f.gpuId ? "WHERE s.gpu_id = ?" : "", f.limit ? fmt::format(" LIMIT {}", std::max(0, *f.limit)) : ""));
    if (f.gpuId) st.bind(1, *f.gpuId);
    std::vector<StoredSeen> out;
    while (st.step()) {
      StoredSeen s;
      s.gpuId = st.getInt64(0);
      s.gpuFingerprint = st.getText(1);
      s.gpuName = st.getText(2);
      s.problem = sqlstore::readProblem(st, 3);
      s.calls = st.getInt64(9);
      s.timeMs = st.getDouble(10);
      s.firstSeen = st.getText(11);
      s.lastSeen = st.getText(12);
      out.push_back(std::move(s));
    }
    return out;
  });
}

}  // namespace gemmtune::db
