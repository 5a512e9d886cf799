// SqlStore's GPUs and runs: adding a GPU or a run (idempotently: a retried commit finds what it
// wrote), ending a run, and reading them back. Part of SqlStoreImpl.hpp (included only by the
// files that instantiate SqlStore).
#pragma once

#include <fmt/format.h>
#include <unistd.h>

#include <random>
#include <string>
#include <utility>
#include <vector>

#include "Clock.hpp"
#include "Quote.hpp"
#include "SqlStore.hpp"
#include "SqlStoreColumns.hpp"

#ifndef GEMMTUNE_VERSION
#define GEMMTUNE_VERSION "unknown"
#endif

namespace gemmtune::db::sqlstore {

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

}  // namespace gemmtune::db::sqlstore

namespace gemmtune::db {

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

}  // namespace gemmtune::db
