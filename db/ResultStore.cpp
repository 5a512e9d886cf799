#include "ResultStore.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>

#include "Clock.hpp"
#include "ParamsJson.hpp"
#include "Quote.hpp"

#ifndef GEMMTUNE_VERSION
#define GEMMTUNE_VERSION "unknown"
#endif

namespace gemmtune::db {

namespace {

constexpr std::array<std::string_view, 9> kStatuses = {
    "ok", "rejected", "compile_error", "launch_error", "runtime_fault", "timeout", "worker_died", "wrong_result",
    "pruned"};

// The results columns written from a ResultRecord, in bindResult()/readResult() order.
constexpr std::array<std::string_view, 37> kResultColumns = {
    "family", "instance", "params", "m", "n", "k", "layout", "beta_class", "status", "status_reason",
    "error_text", "median_ms", "min_ms", "spread", "reps", "partial", "gflops", "max_error", "sm_clock_mhz",
    "threads_per_block", "registers", "static_smem_bytes", "dynamic_smem_bytes", "stack_frame_bytes",
    "spill_store_bytes", "spill_load_bytes", "occupancy", "limiter", "arch", "compile_options", "source_hash",
    "driver_version", "nvrtc_version", "method_version", "lowered_name", "cubin", "measured_at"};

std::string joined(std::string_view prefix, bool cubin) {
  std::string out;
  for (auto c : kResultColumns) {
    if (!out.empty()) out += ", ";
    out += (c == "cubin" && !cubin) ? std::string("NULL") : fmt::format("{}{}", prefix, c);
  }
  return out;
}

// Binds consecutive parameters without spelling out their indexes.
class ParamBinder {
 public:
  ParamBinder(Statement& st, int first) : st_(st), next_(first) {}
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
  Statement& st_;
  int next_;
};

void bindResult(Statement& st, int first, const ResultRecord& r) {
  std::optional<double> gflops = r.gflops;
  if (!gflops && r.medianMs && *r.medianMs > 0) gflops = gflopsOf(r.key.problem, *r.medianMs);
  const auto& p = r.key.problem;
  ParamBinder bind(st, first);
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

std::optional<int> optionalInt(const Statement& st, int c) {
  auto v = st.getOptionalInt64(c);
  return v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
}

void readResult(const Statement& st, int first, ResultRecord& r) {
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
  r.smClockMHz = optionalInt(st, i++);
  r.threadsPerBlock = optionalInt(st, i++);
  r.registers = optionalInt(st, i++);
  r.staticSmemBytes = optionalInt(st, i++);
  r.dynamicSmemBytes = optionalInt(st, i++);
  r.stackFrameBytes = optionalInt(st, i++);
  r.spillStoreBytes = optionalInt(st, i++);
  r.spillLoadBytes = optionalInt(st, i++);
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

constexpr std::string_view kGpuColumns =
    "name, profile, cc_major, cc_minor, sm_count, max_threads_per_block, max_threads_per_sm, max_blocks_per_sm, "
    "warp_size, regs_per_sm, regs_per_block, max_regs_per_thread, reg_alloc_unit, smem_per_sm, smem_per_block, "
    "smem_per_block_optin, smem_reserved_per_block, l2_bytes, mem_clock_khz, mem_bus_width_bits, clock_khz, "
    "total_mem_bytes";

GpuSpec readGpu(const Statement& st, int first) {
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

std::string randomUid() {
  std::random_device rd;
  std::uniform_int_distribution<std::uint64_t> dist;
  std::mt19937_64 gen((static_cast<std::uint64_t>(rd()) << 32) ^ rd());
  return fmt::format("{:016x}{:016x}", dist(gen), dist(gen));
}

std::string hostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

bool finiteNonNegative(const std::optional<double>& v) { return !v || (std::isfinite(*v) && *v >= 0); }
bool nonNegative(const std::optional<int>& v) { return !v || *v >= 0; }

}  // namespace

// --- records ---------------------------------------------------------------------------------

void ResultRecord::setStatus(std::string_view full) {
  auto colon = full.find(':');
  status = std::string(full.substr(0, colon));
  statusReason = colon == std::string_view::npos ? std::string() : std::string(full.substr(colon + 1));
}

std::string ResultRecord::fullStatus() const { return statusReason.empty() ? status : status + ":" + statusReason; }

void ResultRecord::setConfig(std::string familyName, std::string instance,
                             const std::vector<std::pair<std::string, int>>& namedValues) {
  family = std::move(familyName);
  key.instance = std::move(instance);
  nlohmann::json p = nlohmann::json::object();
  for (const auto& [name, value] : namedValues) p[name] = value;
  params = p.dump();
}

bool isFinalStatus(std::string_view status) {
  std::string_view kind = status.substr(0, status.find(':'));
  return kind != "worker_died" && kind != "pruned";
}

double gflopsOf(const ProblemKey& p, double medianMs) {
  return 2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k) / (medianMs * 1e6);
}

void validateResult(const ResultRecord& r) {
  auto fail = [&](std::string_view what) {
    throw DataError(fmt::format("result for {}: {}", quoteInput(r.instance()), what));
  };
  if (r.instance().empty()) fail("the instance name is empty");
  if (r.family.empty()) fail("the family is empty");
  const auto& p = r.key.problem;
  if (p.m <= 0 || p.n <= 0 || p.k <= 0) fail(fmt::format("problem size {}x{}x{} is not positive", p.m, p.n, p.k));
  if (p.layout.empty() || p.betaClass.empty()) fail("layout and beta class must be named");
  if (std::find(kStatuses.begin(), kStatuses.end(), r.status) == kStatuses.end())
    fail(fmt::format("unknown status '{}'", r.status));
  if (r.status == "ok" && (!r.medianMs || !(*r.medianMs > 0) || !std::isfinite(*r.medianMs)))
    fail("an ok result needs a positive, finite median time");
  for (const auto* v : {&r.medianMs, &r.minMs, &r.spread, &r.gflops, &r.maxError, &r.occupancy})
    if (!finiteNonNegative(*v)) fail("timing, GFLOP/s, error and occupancy must be finite and not negative");
  for (const auto* v : {&r.reps, &r.smClockMHz, &r.threadsPerBlock, &r.registers, &r.staticSmemBytes,
                        &r.dynamicSmemBytes, &r.stackFrameBytes, &r.spillStoreBytes, &r.spillLoadBytes})
    if (!nonNegative(*v)) fail("counts and sizes must not be negative");
  if (r.key.gpuFingerprint.empty() || r.key.sourceHash.empty() || r.key.nvrtcVersion.empty() || r.key.arch.empty())
    fail("the cache key needs the GPU fingerprint, source hash, NVRTC version and arch");
  if (!r.measuredAt.empty() && !isUtcTimestamp(r.measuredAt))
    fail(fmt::format("measured_at '{}' is not a UTC time stamp like 2025-01-31T12:00:00.000000Z", r.measuredAt));
  if (std::string why = paramsTextProblem(r.params); !why.empty()) fail("params: " + why);
}

// --- writes ----------------------------------------------------------------------------------

std::int64_t ResultStore::upsertGpu(const GpuSpec& g, const std::string& firstSeen) {
  std::string fingerprint = gpuFingerprint(g);
  {
    auto find = db_.prepare("SELECT id FROM gpus WHERE fingerprint = ?");
    find.bind(1, fingerprint);
    if (find.step()) return find.getInt64(0);
  }
  std::string placeholders;
  for (auto c : kGpuColumns)
    if (c == ',') placeholders += ", ?";
  auto st = db_.prepare(
      fmt::format("INSERT INTO gpus (fingerprint, first_seen, {}) VALUES (?, ?, ?{})", kGpuColumns, placeholders));
  ParamBinder bind(st, 1);
  bind(fingerprint)(firstSeen.empty() ? utcTimestamp() : firstSeen)(g.name)(g.profile);
  for (int v : {g.ccMajor, g.ccMinor, g.smCount, g.maxThreadsPerBlock, g.maxThreadsPerSm, g.maxBlocksPerSm,
                g.warpSize, g.regsPerSm, g.regsPerBlock, g.maxRegsPerThread, g.regAllocUnit, g.smemPerSm,
                g.smemPerBlock, g.smemPerBlockOptin, g.smemReservedPerBlock, g.l2Bytes, g.memClockKhz,
                g.memBusWidthBits, g.clockKhz})
    bind(v);
  bind(static_cast<std::int64_t>(g.totalMemBytes));
  st.run();
  return db_.lastInsertRowid();
}

std::int64_t ResultStore::insertRun(std::int64_t gpuId, const RunInfo& run) {
  std::string uid = run.uid.empty() ? randomUid() : run.uid;
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
      "command_line, host) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  st.bind(1, uid).bind(2, gpuId).bind(3, run.gpu.uuid);
  st.bind(4, run.startedAt.empty() ? utcTimestamp() : run.startedAt);
  if (run.endedAt.empty())
    st.bindNull(5);
  else
    st.bind(5, run.endedAt);
  st.bind(6, run.toolVersion.empty() ? std::string(GEMMTUNE_VERSION) : run.toolVersion);
  st.bind(7, run.driverVersion).bind(8, run.nvrtcVersion).bind(9, run.commandLine);
  st.bind(10, run.host.empty() ? hostName() : run.host);
  st.run();
  return db_.lastInsertRowid();
}

bool ResultStore::upsertResult(std::int64_t runId, std::int64_t gpuId, const ResultRecord& r) {
  std::string updates;
  for (auto c : kResultColumns) updates += fmt::format("{}{} = excluded.{}", updates.empty() ? "" : ", ", c, c);
  std::string placeholders;
  for (size_t i = 0; i < kResultColumns.size(); ++i) placeholders += ", ?";
  auto st = db_.prepare(fmt::format(
      "INSERT INTO results (run_id, gpu_id, cache_key, {}) VALUES (?, ?, ?{}) "
      "ON CONFLICT (cache_key) DO UPDATE SET run_id = excluded.run_id, gpu_id = excluded.gpu_id, {} "
      "WHERE excluded.measured_at > results.measured_at",
      joined("", true), placeholders, updates));
  st.bind(1, runId).bind(2, gpuId).bind(3, r.key.hash());
  bindResult(st, 4, r);
  st.run();
  return db_.changes() > 0;
}

bool ResultStore::upsertBaseline(std::int64_t runId, std::int64_t gpuId, const BaselineRecord& b) {
  if (!(b.medianMs > 0) || !std::isfinite(b.medianMs) || b.problem.m <= 0 || b.problem.n <= 0 || b.problem.k <= 0)
    throw DataError(fmt::format("baseline {} {}x{}x{}: needs a positive size and median time", b.library,
                                b.problem.m, b.problem.n, b.problem.k));
  auto st = db_.prepare(
      "INSERT INTO baselines (run_id, gpu_id, library, library_version, m, n, k, layout, beta_class, median_ms, "
      "gflops, measured_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
      "ON CONFLICT (gpu_id, library, library_version, m, n, k, layout, beta_class) DO UPDATE SET "
      "run_id = excluded.run_id, median_ms = excluded.median_ms, gflops = excluded.gflops, "
      "measured_at = excluded.measured_at WHERE excluded.measured_at > baselines.measured_at");
  st.bind(1, runId).bind(2, gpuId).bind(3, b.library).bind(4, b.libraryVersion);
  st.bind(5, static_cast<std::int64_t>(b.problem.m)).bind(6, static_cast<std::int64_t>(b.problem.n));
  st.bind(7, static_cast<std::int64_t>(b.problem.k)).bind(8, b.problem.layout).bind(9, b.problem.betaClass);
  st.bind(10, b.medianMs).bind(11, b.gflops > 0 ? b.gflops : gflopsOf(b.problem, b.medianMs));
  st.bind(12, b.measuredAt.empty() ? utcTimestamp() : b.measuredAt);
  st.run();
  return db_.changes() > 0;
}

std::int64_t ResultStore::recordGpu(const GpuSpec& gpu) {
  Transaction tx(db_);
  std::int64_t id = upsertGpu(gpu, {});
  tx.commit();
  return id;
}

std::int64_t ResultStore::beginRun(const RunInfo& run) {
  Transaction tx(db_);
  std::int64_t id = insertRun(upsertGpu(run.gpu, {}), run);
  tx.commit();
  return id;
}

void ResultStore::endRun(std::int64_t runId) {
  Transaction tx(db_);
  auto st = db_.prepare("UPDATE runs SET ended_at = ? WHERE id = ?");
  st.bind(1, utcTimestamp()).bind(2, runId).run();
  tx.commit();
}

bool ResultStore::recordResult(std::int64_t runId, const ResultRecord& r) {
  validateResult(r);
  Transaction tx(db_);
  auto run = db_.prepare("SELECT r.gpu_id, g.fingerprint FROM runs r JOIN gpus g ON g.id = r.gpu_id WHERE r.id = ?");
  run.bind(1, runId);
  if (!run.step()) throw UsageError(fmt::format("no tuning run {} in {}", runId, db_.path().string()));
  if (run.getText(1) != r.key.gpuFingerprint)
    throw UsageError(fmt::format("result for '{}' names another GPU than run {}", r.instance(), runId));
  bool written = upsertResult(runId, run.getInt64(0), r);
  tx.commit();
  return written;
}

bool ResultStore::recordBaseline(std::int64_t runId, const BaselineRecord& b) {
  Transaction tx(db_);
  auto run = db_.prepare("SELECT gpu_id FROM runs WHERE id = ?");
  run.bind(1, runId);
  if (!run.step()) throw UsageError(fmt::format("no tuning run {} in {}", runId, db_.path().string()));
  bool written = upsertBaseline(runId, run.getInt64(0), b);
  tx.commit();
  return written;
}

// --- reads -----------------------------------------------------------------------------------

std::unordered_map<std::string, std::string> ResultStore::finalStatuses(const GpuSpec& gpu) const {
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
}

std::vector<StoredGpu> ResultStore::gpus() const {
  std::vector<StoredGpu> out;
  auto st = db_.prepare(fmt::format(
      "SELECT id, fingerprint, first_seen, (SELECT max(started_at) FROM runs WHERE gpu_id = gpus.id), {} "
      "FROM gpus ORDER BY id",
      kGpuColumns));
  while (st.step()) {
    StoredGpu g;
    g.id = st.getInt64(0);
    g.fingerprint = st.getText(1);
    g.firstSeen = st.getText(2);
    g.lastRunAt = st.getText(3);
    g.spec = readGpu(st, 4);
    out.push_back(std::move(g));
  }
  return out;
}

std::vector<StoredRun> ResultStore::runs() const {
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
}

namespace {

std::string whereClause(const ResultFilter& f, bool withSize) {
  std::string where = "1";
  if (f.gpuId) where += " AND r.gpu_id = :gpu";
  if (withSize && f.m) where += " AND r.m = :m";
  if (withSize && f.n) where += " AND r.n = :n";
  if (withSize && f.k) where += " AND r.k = :k";
  if (f.family) where += " AND r.family = :family";
  if (f.layout) where += " AND r.layout = :layout";
  if (f.betaClass) where += " AND r.beta_class = :beta";
  if (f.status)
    where += f.status->find(':') == std::string::npos ? " AND r.status = :status"
                                                       : " AND r.status || ':' || r.status_reason = :status";
  return where;
}

void bindFilter(Statement& st, const ResultFilter& f, bool withSize) {
  auto bindNamed = [&](const char* name, auto value) { st.bind(st.parameterIndex(name), value); };
  if (f.gpuId) bindNamed(":gpu", *f.gpuId);
  if (withSize && f.m) bindNamed(":m", static_cast<std::int64_t>(*f.m));
  if (withSize && f.n) bindNamed(":n", static_cast<std::int64_t>(*f.n));
  if (withSize && f.k) bindNamed(":k", static_cast<std::int64_t>(*f.k));
  if (f.family) bindNamed(":family", *f.family);
  if (f.layout) bindNamed(":layout", *f.layout);
  if (f.betaClass) bindNamed(":beta", *f.betaClass);
  if (f.status) bindNamed(":status", *f.status);
}

}  // namespace

std::vector<StoredResult> ResultStore::results(const ResultFilter& f) const {
  auto st = db_.prepare(fmt::format(
      "SELECT r.id, r.run_id, r.gpu_id, r.cache_key, g.fingerprint, g.name, u.uid, {} FROM results r "
      "JOIN gpus g ON g.id = r.gpu_id JOIN runs u ON u.id = r.run_id WHERE {} "
      "ORDER BY g.id, r.m, r.n, r.k, r.status <> 'ok', r.gflops DESC, r.instance",
      joined("r.", f.withCubin), whereClause(f, true)));
  bindFilter(st, f, true);
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
    readResult(st, 7, r);
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<ProblemKey> ResultStore::measuredSizes(const ResultFilter& f) const {
  auto st = db_.prepare(fmt::format("SELECT DISTINCT r.m, r.n, r.k, r.layout, r.beta_class FROM results r WHERE {}",
                                    whereClause(f, false)));
  bindFilter(st, f, false);
  std::vector<ProblemKey> out;
  while (st.step()) out.push_back({st.getInt64(0), st.getInt64(1), st.getInt64(2), st.getText(3), st.getText(4)});
  return out;
}

std::string ResultStore::cubinOf(std::int64_t resultId) const {
  auto st = db_.prepare("SELECT cubin FROM results WHERE id = ?");
  st.bind(1, resultId);
  return st.step() ? st.getBlob(0) : std::string();
}

std::vector<StoredBaseline> ResultStore::baselines() const {
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
}

std::optional<double> ResultStore::baselineGflops(std::int64_t gpuId, const ProblemKey& p,
                                                  std::string_view library) const {
  auto st = db_.prepare(
      "SELECT gflops FROM baselines WHERE gpu_id = ? AND library = ? AND m = ? AND n = ? AND k = ? AND layout = ? "
      "AND beta_class = ? ORDER BY measured_at DESC LIMIT 1");
  st.bind(1, gpuId).bind(2, library).bind(3, static_cast<std::int64_t>(p.m)).bind(4, static_cast<std::int64_t>(p.n));
  st.bind(5, static_cast<std::int64_t>(p.k)).bind(6, p.layout).bind(7, p.betaClass);
  if (st.step()) return st.getDouble(0);
  return std::nullopt;
}

}  // namespace gemmtune::db
