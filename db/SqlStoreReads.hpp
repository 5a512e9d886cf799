// SqlStore's reads of measurements: consistent read views, the filtered and ordered results
// query, measured sizes, cubins, final statuses and baselines. Part of SqlStoreImpl.hpp (included
// only by the files that instantiate SqlStore).
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "SqlStore.hpp"
#include "SqlStoreColumns.hpp"

namespace gemmtune::db::sqlstore {

// A WHERE clause and its parameters, in order.
struct Where {
  std::string sql = "TRUE";
  std::vector<std::variant<std::int64_t, std::string>> values;
  template <class T>
  void add(std::string_view condition, T value) {
    sql += fmt::format(" AND {}", condition);
    values.emplace_back(std::move(value));
  }
  template <class St>
  void bindTo(St& st) const {
    int i = 1;
    for (const auto& v : values) std::visit([&](const auto& x) { st.bind(i++, x); }, v);
  }
};

inline Where whereOf(const ResultFilter& f, bool withSize) {
  Where w;
  if (f.gpuId) w.add("r.gpu_id = ?", *f.gpuId);
  if (withSize && f.m) w.add("r.m = ?", static_cast<std::int64_t>(*f.m));
  if (withSize && f.n) w.add("r.n = ?", static_cast<std::int64_t>(*f.n));
  if (withSize && f.k) w.add("r.k = ?", static_cast<std::int64_t>(*f.k));
  if (f.family) w.add("r.family = ?", *f.family);
  for (const std::string& family : f.notFamilies) w.add("r.family <> ?", family);
  if (f.layout) w.add("r.layout = ?", *f.layout);
  if (f.batch) w.add("r.batch = ?", static_cast<std::int64_t>(*f.batch));
  if (f.betaClass) w.add("r.beta_class = ?", *f.betaClass);
  if (f.status)
    w.add(f.status->find(':') == std::string::npos ? "r.status = ?" : "r.status || ':' || r.status_reason = ?",
          *f.status);
  return w;
}

// results()' order — GPU, size, layout, batch, ok rows first, fastest first, then by name —
// leaving out the terms the filter fixes, so that for one GPU, size and status the index (results_by_size)
// yields rows in order and a LIMIT stops early instead of sorting every row of the size.
inline std::string resultOrderOf(const ResultFilter& f) {
  std::string order;
  auto add = [&](bool fixed, std::string_view term) {
    if (!fixed) order += fmt::format("{}, ", term);
  };
  add(f.gpuId.has_value(), "g.id");
  add(f.m.has_value(), "r.m");
  add(f.n.has_value(), "r.n");
  add(f.k.has_value(), "r.k");
  add(f.layout.has_value(), "r.layout");
  add(f.batch.has_value(), "r.batch");
  add(f.status.has_value(), "r.status <> 'ok'");
  return order + "r.gflops DESC NULLS LAST, r.instance";
}

}  // namespace gemmtune::db::sqlstore

namespace gemmtune::db {

// One read transaction (SQLite: deferred, its snapshot taken at the first read; PostgreSQL:
// REPEATABLE READ, READ ONLY), opened by the outermost view only.
template <class Conn, class Tx>
class SqlStore<Conn, Tx>::View final : public ReadView {
 public:
  explicit View(const SqlStore& store) : store_(store) {
    if (store_.views_ == 0) tx_.emplace(store_.db_, Tx::Kind::Read);
    ++store_.views_;
  }
  ~View() override {
    --store_.views_;
    if (!tx_) return;
    try {
      tx_->commit();  // nothing was written: commit and rollback end the view alike
    } catch (...) {  // a destructor never throws; a lost connection has ended the view already
    }
  }

 private:
  const SqlStore& store_;
  std::optional<Tx> tx_;
};

template <class Conn, class Tx>
std::unique_ptr<ReadView> SqlStore<Conn, Tx>::consistentReads() const {
  if (views_ > 0) return std::make_unique<View>(*this);
  return retried([&] { return std::unique_ptr<ReadView>(std::make_unique<View>(*this)); });
}

template <class Conn, class Tx>
std::unordered_map<std::string, std::string> SqlStore<Conn, Tx>::finalStatuses(const GpuSpec& gpu) const {
  return retried([&] {
    std::unordered_map<std::string, std::string> out;
    auto st = db_.prepare(
        "SELECT r.cache_key, r.status, r.status_reason FROM results r JOIN gpus g ON g.id = r.gpu_id "
        "WHERE g.fingerprint = ?");
    st.bind(1, gpuFingerprint(gpu));
    while (st.step()) {
      std::string reason = st.getText(2);
      std::string status = reason.empty() ? st.getText(1) : st.getText(1) + ":" + reason;
      if (isFinalStatus(status)) out.emplace(st.getText(0), std::move(status));
    }
    return out;
  });
}

template <class Conn, class Tx>
std::vector<StoredResult> SqlStore<Conn, Tx>::results(const ResultFilter& f) const {
  return retried([&] {
    auto where = sqlstore::whereOf(f, true);
    auto st = db_.prepare(fmt::format(
        "SELECT r.id, r.run_id, r.gpu_id, r.cache_key, g.fingerprint, g.name, u.uid, {} FROM results r "
        "JOIN gpus g ON g.id = r.gpu_id JOIN runs u ON u.id = r.run_id WHERE {} "
        "ORDER BY {}{}",
        sqlstore::joined("r.", f.withCubin), where.sql, sqlstore::resultOrderOf(f),
        f.limit ? fmt::format(" LIMIT {}", std::max(0, *f.limit)) : ""));
    where.bindTo(st);
    std::vector<StoredResult> out;
    while (st.step()) {
      StoredResult r;
      r.id = st.getInt64(0);
      r.runId = st.getInt64(1);
      r.gpuId = st.getInt64(2);
      r.cacheKeyHash = st.getText(3);
      r.key.gpuFingerprint = st.getText(4);
      r.gpuName = st.getText(5);
      r.runUid = st.getText(6);
      sqlstore::readResult(st, 7, r);
      out.push_back(std::move(r));
    }
    return out;
  });
}

template <class Conn, class Tx>
std::vector<ProblemKey> SqlStore<Conn, Tx>::measuredSizes(const ResultFilter& f) const {
  return retried([&] {
    auto where = sqlstore::whereOf(f, false);
    auto st = db_.prepare(fmt::format(
        "SELECT DISTINCT r.m, r.n, r.k, r.layout, r.beta_class, r.batch FROM results r WHERE {}", where.sql));
    where.bindTo(st);
    std::vector<ProblemKey> out;
    while (st.step())
      out.push_back({st.getInt64(0), st.getInt64(1), st.getInt64(2), st.getText(3), st.getText(4), st.getInt64(5)});
    return out;
  });
}

template <class Conn, class Tx>
std::string SqlStore<Conn, Tx>::cubinOf(std::int64_t resultId) const {
  return retried([&] {
    auto st = db_.prepare("SELECT cubin FROM results WHERE id = ?");
    st.bind(1, resultId);
    return st.step() ? st.getBlob(0) : std::string();
  });
}

template <class Conn, class Tx>
std::vector<StoredBaseline> SqlStore<Conn, Tx>::baselines() const {
  return retried([&] {
    std::vector<StoredBaseline> out;
    auto st = db_.prepare(
        "SELECT g.fingerprint, u.uid, b.library, b.library_version, b.m, b.n, b.k, b.layout, b.batch, "
        "b.beta_class, b.median_ms, b.gflops, b.measured_at FROM baselines b JOIN gpus g ON g.id = b.gpu_id "
        "JOIN runs u ON u.id = b.run_id ORDER BY b.id");
    while (st.step()) {
      StoredBaseline b;
      b.gpuFingerprint = st.getText(0);
      b.runUid = st.getText(1);
      b.library = st.getText(2);
      b.libraryVersion = st.getText(3);
      b.problem = sqlstore::readProblem(st, 4);
      b.medianMs = st.getDouble(10);
      b.gflops = st.getDouble(11);
      b.measuredAt = st.getText(12);
      out.push_back(std::move(b));
    }
    return out;
  });
}

template <class Conn, class Tx>
std::optional<double> SqlStore<Conn, Tx>::baselineGflops(std::int64_t gpuId, const ProblemKey& p,
                                                         std::string_view library) const {
  return retried([&]() -> std::optional<double> {
    auto st = db_.prepare(
        "SELECT gflops FROM baselines WHERE gpu_id = ? AND library = ? AND m = ? AND n = ? AND k = ? AND layout = ? "
        "AND batch = ? AND beta_class = ? ORDER BY measured_at DESC LIMIT 1");
    sqlstore::ParamBinder(st, 1)(gpuId)(library).problem(p);
    if (st.step()) return st.getDouble(0);
    return std::nullopt;
  });
}

}  // namespace gemmtune::db
