// SqlStore's definitions: every query of the results store, written once for both backends.
// Included only by the files that instantiate SqlStore (SqliteStore.cpp, PgStore.cpp).
#pragma once

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <random>
#include <variant>

#include "Clock.hpp"
#include "Log.hpp"
#include "Quote.hpp"
#include "SqlStore.hpp"

#ifndef GEMMTUNE_VERSION
#define GEMMTUNE_VERSION "unknown"
#endif

namespace gemmtune::db::sqlstore {

// The results columns written from a ResultRecord, in bindResult()/readResult() order.
inline constexpr std::array<std::string_view, 37> kResultColumns = {
    "family", "instance", "params", "m", "n", "k", "layout", "beta_class", "status", "status_reason",
    "error_text", "median_ms", "min_ms", "spread", "reps", "partial", "gflops", "max_error", "sm_clock_mhz",
    "threads_per_block", "registers", "static_smem_bytes", "dynamic_smem_bytes", "stack_frame_bytes",
    "spill_store_bytes", "spill_load_bytes", "occupancy", "limiter", "arch", "compile_options", "source_hash",
    "driver_version", "nvrtc_version", "method_version", "lowered_name", "cubin", "measured_at"};

inline std::string joined(std::string_view prefix, bool cubin) {
  std::string out;
  for (auto c : kResultColumns) {
    if (!out.empty()) out += ", ";
    out += (c == "cubin" && !cubin) ? std::string("NULL") : fmt::format("{}{}", prefix, c);
  }
  return out;
}

inline std::string placeholders(std::size_t count) {
  std::string out;
  for (std::size_t i = 0; i < count; ++i) out += i ? ", ?" : "?";
  return out;
}

// Binds consecutive parameters without spelling out their indexes.
template <class St>
class ParamBinder {
 public:
  ParamBinder(St& st, int first) : st_(st), next_(first) {}
  template <class T>
  ParamBinder& operator()(const T& value) {
    st_.bind(next_++, value);
    return *this;
  }
  ParamBinder& blob(std::string_view bytes) {
    if (bytes.empty())
      st_.bindNull(next_++);
    else
      st_.bindBlob(next_++, bytes);
    return *this;
  }

 private:
  St& st_;
  int next_;
};

template <class St>
void bindResult(St& st, int first, const ResultRecord& r) {
  std::optional<double> gflops = r.gflops;
  if (!gflops && r.medianMs && *r.medianMs > 0) gflops = gflopsOf(r.key.problem, *r.medianMs);
  const auto& p = r.key.problem;
  ParamBinder<St> bind(st, first);
  bind(r.family)(r.instance())(r.params);
  bind(static_cast<std::int64_t>(p.m))(static_cast<std::int64_t>(p.n))(static_cast<std::int64_t>(p.k));
  bind(p.layout)(p.betaClass)(r.status)(r.statusReason)(r.errorText);
  bind(r.medianMs)(r.minMs)(r.spread)(r.reps)(r.partial ? 1 : 0)(gflops)(r.maxError)(r.smClockMHz);
  bind(r.threadsPerBlock)(r.registers)(r.staticSmemBytes)(r.dynamicSmemBytes)(r.stackFrameBytes);
  bind(r.spillStoreBytes)(r.spillLoadBytes)(r.occupancy)(r.limiter);
  bind(r.key.arch)(r.key.compileOptions)(r.key.sourceHash)(r.key.driverVersion)(r.key.nvrtcVersion);
  bind(r.key.methodVersion)(r.loweredName).blob(r.cubin);
  bind(r.measuredAt.empty() ? utcTimestamp() : r.measuredAt);
}

template <class St>
std::optional<int> optionalInt(const St& st, int c) {
  auto v = st.getOptionalInt64(c);
  return v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
}

template <class St>
void readResult(const St& st, int first, ResultRecord& r) {
  int i = first;
  r.family = st.getText(i++);
  r.key.instance = st.getText(i++);
  r.params = st.getText(i++);
  r.key.problem.m = st.getInt64(i++);
  r.key.problem.n = st.getInt64(i++);
  r.key.problem.k = st.getInt64(i++);
  r.key.problem.layout = st.getText(i++);
  r.key.problem.betaClass = st.getText(i++);
  r.status = st.getText(i++);
  r.statusReason = st.getText(i++);
  r.errorText = st.getText(i++);
  r.medianMs = st.getOptionalDouble(i++);
  r.minMs = st.getOptionalDouble(i++);
  r.spread = st.getOptionalDouble(i++);
  r.reps = optionalInt(st, i++);
  r.partial = st.getInt64(i++) != 0;
  r.gflops = st.getOptionalDouble(i++);
  r.maxError = st.getOptionalDouble(i++);
  for (auto* field : {&r.smClockMHz, &r.threadsPerBlock, &r.registers, &r.staticSmemBytes, &r.dynamicSmemBytes,
                      &r.stackFrameBytes, &r.spillStoreBytes, &r.spillLoadBytes})
    *field = optionalInt(st, i++);
  r.occupancy = st.getOptionalDouble(i++);
  r.limiter = st.getText(i++);
  r.key.arch = st.getText(i++);
  r.key.compileOptions = st.getText(i++);
  r.key.sourceHash = st.getText(i++);
  r.key.driverVersion = st.getInt(i++);
  r.key.nvrtcVersion = st.getText(i++);
  r.key.methodVersion = st.getText(i++);
  r.loweredName = st.getText(i++);
  r.cubin = st.getBlob(i++);
  r.measuredAt = st.getText(i++);
}

inline constexpr std::string_view kGpuColumns =
    "name, profile, cc_major, cc_minor, sm_count, max_threads_per_block, max_threads_per_sm, max_blocks_per_sm, "
    "warp_size, regs_per_sm, regs_per_block, max_regs_per_thread, reg_alloc_unit, smem_per_sm, smem_per_block, "
    "smem_per_block_optin, smem_reserved_per_block, l2_bytes, mem_clock_khz, mem_bus_width_bits, clock_khz, "
    "total_mem_bytes";

template <class St>
GpuSpec readGpu(const St& st, int first) {
  GpuSpec g;
  int i = first;
  g.name = st.getText(i++);
  g.profile = st.getText(i++);
  for (int* field : {&g.ccMajor, &g.ccMinor, &g.smCount, &g.maxThreadsPerBlock, &g.maxThreadsPerSm,
                     &g.maxBlocksPerSm, &g.warpSize, &g.regsPerSm, &g.regsPerBlock, &g.maxRegsPerThread,
                     &g.regAllocUnit, &g.smemPerSm, &g.smemPerBlock, &g.smemPerBlockOptin, &g.smemReservedPerBlock,
                     &g.l2Bytes, &g.memClockKhz, &g.memBusWidthBits, &g.clockKhz})
    *field = st.getInt(i++);
  g.totalMemBytes = st.getInt64(i++);
  return g;
}

inline std::string randomUid() {
  std::random_device rd;
  std::uniform_int_distribution<std::uint64_t> dist;
  std::mt19937_64 gen((static_cast<std::uint64_t>(rd()) << 32) ^ rd());
  return fmt::format("{:016x}{:016x}", dist(gen), dist(gen));
}

inline std::string hostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

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
  if (f.layout) w.add("r.layout = ?", *f.layout);
  if (f.betaClass) w.add("r.beta_class = ?", *f.betaClass);
  if (f.status)
    w.add(f.status->find(':') == std::string::npos ? "r.status = ?" : "r.status || ':' || r.status_reason = ?",
          *f.status);
  return w;
}

// results()' order — GPU, size, ok rows first, fastest first, then by name — leaving out the
// terms the filter fixes, so that for one GPU, size and status the index (results_by_size)
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
  add(f.status.has_value(), "r.status <> 'ok'");
  return order + "r.gflops DESC NULLS LAST, r.instance";
}

}  // namespace gemmtune::db::sqlstore

namespace gemmtune::db {

template <class Conn, class Tx>
SqlStore<Conn, Tx>::SqlStore(Conn& conn) : db_(conn), location_(conn.location()) {}

template <class Conn, class Tx>
SqlStore<Conn, Tx>::SqlStore(std::unique_ptr<Conn> conn)
    : owned_(std::move(conn)), db_(*owned_), location_(owned_->location()) {}

template <class Conn, class Tx>
bool SqlStore<Conn, Tx>::hasSchema() const {
  return db_.hasSchema();
}

// --- writes ----------------------------------------------------------------------------------

template <class Conn, class Tx>
std::int64_t SqlStore<Conn, Tx>::upsertGpu(const GpuSpec& g, const std::string& firstSeen) {
  using namespace sqlstore;
  std::string fingerprint = gpuFingerprint(g);
  if (auto id = gpuId(fingerprint)) return *id;
  // DO NOTHING: a concurrent writer may have added the same GPU since; its row is the one.
  auto st = db_.prepare(fmt::format("INSERT INTO gpus (fingerprint, first_seen, {}) VALUES ({}) "
                                    "ON CONFLICT (fingerprint) DO NOTHING",
                                    kGpuColumns, placeholders(24)));
  ParamBinder bind(st, 1);
  bind(fingerprint)(firstSeen.empty() ? utcTimestamp() : firstSeen)(g.name)(g.profile);
  for (int v : {g.ccMajor, g.ccMinor, g.smCount, g.maxThreadsPerBlock, g.maxThreadsPerSm, g.maxBlocksPerSm,
                g.warpSize, g.regsPerSm, g.regsPerBlock, g.maxRegsPerThread, g.regAllocUnit, g.smemPerSm,
                g.smemPerBlock, g.smemPerBlockOptin, g.smemReservedPerBlock, g.l2Bytes, g.memClockKhz,
                g.memBusWidthBits, g.clockKhz})
    bind(v);
  bind(static_cast<std::int64_t>(g.totalMemBytes));
  st.run();
  return gpuId(fingerprint).value();
}

template <class Conn, class Tx>
std::int64_t SqlStore<Conn, Tx>::insertRun(std::int64_t gpuId, const RunInfo& run) {
  std::string uid = run.uid.empty() ? sqlstore::randomUid() : run.uid;
  {
    auto find = db_.prepare("SELECT id, gpu_id FROM runs WHERE uid = ?");
    find.bind(1, uid);
    if (find.step()) {
      std::int64_t id = find.getInt64(0);
      // A run measures one GPU: an import must not attach another GPU's rows to it.
      if (find.getInt64(1) != gpuId)
        throw DataError(fmt::format("run {} is already stored for another GPU; it was not modified", quoteInput(uid)));
      if (!run.endedAt.empty()) {
        auto end = db_.prepare("UPDATE runs SET ended_at = ? WHERE id = ? AND ended_at IS NULL");
        end.bind(1, run.endedAt).bind(2, id).run();
      }
      return id;
    }
  }
  auto st = db_.prepare(
      "INSERT INTO runs (uid, gpu_id, gpu_uuid, started_at, ended_at, tool_version, driver_version, nvrtc_version, "
      "command_line, host) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id");
  st.bind(1, uid).bind(2, gpuId).bind(3, run.gpu.uuid);
  st.bind(4, run.startedAt.empty() ? utcTimestamp() : run.startedAt);
  if (run.endedAt.empty())
    st.bindNull(5);
  else
    st.bind(5, run.endedAt);
  st.bind(6, run.toolVersion.empty() ? std::string(GEMMTUNE_VERSION) : run.toolVersion);
  st.bind(7, run.driverVersion).bind(8, run.nvrtcVersion).bind(9, run.commandLine);
  st.bind(10, run.host.empty() ? sqlstore::hostName() : run.host);
  st.step();
  std::int64_t id = st.getInt64(0);
  st.run();  // finishes the statement
  return id;
}

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
  if (!(b.medianMs > 0) || !std::isfinite(b.medianMs) || b.problem.m <= 0 || b.problem.n <= 0 || b.problem.k <= 0)
    throw DataError(fmt::format("baseline {} {}x{}x{}: needs a positive size and median time", b.library,
                                b.problem.m, b.problem.n, b.problem.k));
  auto st = db_.prepare(
      "INSERT INTO baselines (run_id, gpu_id, library, library_version, m, n, k, layout, beta_class, median_ms, "
      "gflops, measured_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
      "ON CONFLICT (gpu_id, library, library_version, m, n, k, layout, beta_class) DO UPDATE SET "
      "run_id = excluded.run_id, median_ms = excluded.median_ms, gflops = excluded.gflops, "
      "measured_at = excluded.measured_at WHERE excluded.measured_at > baselines.measured_at RETURNING 1");
  st.bind(1, runId).bind(2, gpuId).bind(3, b.library).bind(4, b.libraryVersion);
  st.bind(5, static_cast<std::int64_t>(b.problem.m)).bind(6, static_cast<std::int64_t>(b.problem.n));
  st.bind(7, static_cast<std::int64_t>(b.problem.k)).bind(8, b.problem.layout).bind(9, b.problem.betaClass);
  st.bind(10, b.medianMs).bind(11, b.gflops > 0 ? b.gflops : gflopsOf(b.problem, b.medianMs));
  st.bind(12, b.measuredAt.empty() ? utcTimestamp() : b.measuredAt);
  bool written = st.step();
  st.run();
  return written;
}

template <class Conn, class Tx>
template <class Call>
auto SqlStore<Conn, Tx>::retried(Call&& call) const -> decltype(call()) {
  if constexpr (requires(Conn& c) { c.reconnect(); }) {
    // Only the outermost call retries: an inner one is part of its transaction or view, which
    // died with the connection.
    if (views_ > 0 || calls_ > 0) return call();
    struct Depth {
      int& n;
      explicit Depth(int& count) : n(count) { ++n; }
      ~Depth() { --n; }
    };
    try {
      Depth depth(calls_);
      return call();
    } catch (const StoreConnectionLost& e) {
      logger()->warn("{}: {}; reconnecting", location_, e.what());
      db_.reconnect();  // throws StoreConnectionLost saying what to do when the server stays away
      Depth depth(calls_);
      return call();
    }
  } else {
    return call();
  }
}

template <class Conn, class Tx>
std::pair<std::int64_t, std::string> SqlStore<Conn, Tx>::gpuOfRun(std::int64_t runId) const {
  auto run = db_.prepare("SELECT r.gpu_id, g.fingerprint FROM runs r JOIN gpus g ON g.id = r.gpu_id WHERE r.id = ?");
  run.bind(1, runId);
  if (!run.step()) throw UsageError(fmt::format("no tuning run {} in {}", runId, location_));
  std::pair<std::int64_t, std::string> gpu{run.getInt64(0), run.getText(1)};
  run.run();
  return gpu;
}

template <class Conn, class Tx>
std::int64_t SqlStore<Conn, Tx>::recordGpu(const GpuSpec& gpu) {
  return retried([&] {
    Tx tx(db_);
    std::int64_t id = upsertGpu(gpu, {});
    tx.commit();
    return id;
  });
}

template <class Conn, class Tx>
std::int64_t SqlStore<Conn, Tx>::beginRun(const RunInfo& run) {
  RunInfo named = run;  // the uid is chosen once: a retried commit finds the run it wrote
  if (named.uid.empty()) named.uid = sqlstore::randomUid();
  return retried([&] {
    Tx tx(db_);
    std::int64_t id = insertRun(upsertGpu(named.gpu, {}), named);
    tx.commit();
    return id;
  });
}

template <class Conn, class Tx>
void SqlStore<Conn, Tx>::endRun(std::int64_t runId) {
  const std::string now = utcTimestamp();
  retried([&] {
    Tx tx(db_);
    auto st = db_.prepare("UPDATE runs SET ended_at = ? WHERE id = ?");
    st.bind(1, now).bind(2, runId).run();
    tx.commit();
  });
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

// --- reads -----------------------------------------------------------------------------------

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
std::optional<std::int64_t> SqlStore<Conn, Tx>::gpuId(const std::string& fingerprint) const {
  return retried([&]() -> std::optional<std::int64_t> {
    auto st = db_.prepare("SELECT id FROM gpus WHERE fingerprint = ?");
    st.bind(1, fingerprint);
    if (!st.step()) return std::nullopt;
    std::int64_t id = st.getInt64(0);
    st.run();
    return id;
  });
}

template <class Conn, class Tx>
std::vector<StoredGpu> SqlStore<Conn, Tx>::gpus() const {
  return retried([&] {
    std::vector<StoredGpu> out;
    auto st = db_.prepare(fmt::format(
        "SELECT id, fingerprint, first_seen, (SELECT max(started_at) FROM runs WHERE gpu_id = gpus.id), {} "
        "FROM gpus ORDER BY id",
        sqlstore::kGpuColumns));
    while (st.step()) {
      StoredGpu g;
      g.id = st.getInt64(0);
      g.fingerprint = st.getText(1);
      g.firstSeen = st.getText(2);
      g.lastRunAt = st.getText(3);
      g.spec = sqlstore::readGpu(st, 4);
      out.push_back(std::move(g));
    }
    return out;
  });
}

template <class Conn, class Tx>
std::vector<StoredRun> SqlStore<Conn, Tx>::runs() const {
  return retried([&] {
    std::vector<StoredRun> out;
    auto st = db_.prepare(
        "SELECT r.id, r.uid, g.fingerprint, r.gpu_uuid, r.started_at, r.ended_at, r.tool_version, r.driver_version, "
        "r.nvrtc_version, r.command_line, r.host FROM runs r JOIN gpus g ON g.id = r.gpu_id ORDER BY r.id");
    while (st.step()) {
      StoredRun r;
      r.id = st.getInt64(0);
      r.uid = st.getText(1);
      r.gpuFingerprint = st.getText(2);
      r.gpu.uuid = st.getText(3);
      r.startedAt = st.getText(4);
      r.endedAt = st.getText(5);
      r.toolVersion = st.getText(6);
      r.driverVersion = st.getInt(7);
      r.nvrtcVersion = st.getText(8);
      r.commandLine = st.getText(9);
      r.host = st.getText(10);
      out.push_back(std::move(r));
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
    auto st = db_.prepare(
        fmt::format("SELECT DISTINCT r.m, r.n, r.k, r.layout, r.beta_class FROM results r WHERE {}", where.sql));
    where.bindTo(st);
    std::vector<ProblemKey> out;
    while (st.step()) out.push_back({st.getInt64(0), st.getInt64(1), st.getInt64(2), st.getText(3), st.getText(4)});
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
        "SELECT g.fingerprint, u.uid, b.library, b.library_version, b.m, b.n, b.k, b.layout, b.beta_class, "
        "b.median_ms, b.gflops, b.measured_at FROM baselines b JOIN gpus g ON g.id = b.gpu_id "
        "JOIN runs u ON u.id = b.run_id ORDER BY b.id");
    while (st.step()) {
      StoredBaseline b;
      b.gpuFingerprint = st.getText(0);
      b.runUid = st.getText(1);
      b.library = st.getText(2);
      b.libraryVersion = st.getText(3);
      b.problem = {st.getInt64(4), st.getInt64(5), st.getInt64(6), st.getText(7), st.getText(8)};
      b.medianMs = st.getDouble(9);
      b.gflops = st.getDouble(10);
      b.measuredAt = st.getText(11);
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
        "AND beta_class = ? ORDER BY measured_at DESC LIMIT 1");
    st.bind(1, gpuId).bind(2, library).bind(3, static_cast<std::int64_t>(p.m)).bind(4, static_cast<std::int64_t>(p.n));
    st.bind(5, static_cast<std::int64_t>(p.k)).bind(6, p.layout).bind(7, p.betaClass);
    if (st.step()) return st.getDouble(0);
    return std::nullopt;
  });
}

}  // namespace gemmtune::db
