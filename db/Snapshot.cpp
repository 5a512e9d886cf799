#include "Snapshot.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

#include "Database.hpp"
#include "PendingFiles.hpp"

namespace gemmtune::db {

SnapshotCounts copySnapshot(const ResultStore& from, ResultStore& to, const std::set<std::string>& gpuFingerprints) {
  auto wanted = [&](const std::string& fingerprint) {
    return gpuFingerprints.empty() || gpuFingerprints.count(fingerprint) > 0;
  };
  SnapshotCounts counts;
  std::map<std::string, GpuSpec> gpus;  // fingerprint -> spec
  for (const auto& g : from.gpus()) {
    if (!wanted(g.fingerprint)) continue;
    if (gpuFingerprint(g.spec) != g.fingerprint)
      throw DataError(fmt::format("{}: GPU {} is stored under fingerprint {}, which does not match its fields",
                                  from.location(), g.spec.name, g.fingerprint.substr(0, 8)));
    gpus.emplace(g.fingerprint, g.spec);
    to.recordGpu(g.spec);
    ++counts.gpus;
  }

  ResultFilter ok;
  ok.status = "ok";
  ok.withCubin = true;
  std::vector<StoredResult> rows;
  for (auto& r : from.results(ok))
    if (gpus.count(r.key.gpuFingerprint)) rows.push_back(std::move(r));
  std::vector<StoredBaseline> baselines;
  for (auto& b : from.baselines())
    if (gpus.count(b.gpuFingerprint)) baselines.push_back(std::move(b));

  // Only the runs that measured a copied row or baseline, under their original uids.
  std::set<std::string> neededRuns;
  for (const auto& r : rows) neededRuns.insert(r.runUid);
  for (const auto& b : baselines) neededRuns.insert(b.runUid);
  std::map<std::string, std::int64_t> runIds;  // uid -> id in `to`
  for (const auto& run : from.runs()) {
    if (!neededRuns.count(run.uid) || !gpus.count(run.gpuFingerprint)) continue;
    RunInfo info = run;
    std::string uuid = info.gpu.uuid;
    info.gpu = gpus.at(run.gpuFingerprint);
    info.gpu.uuid = uuid;
    runIds[run.uid] = to.beginRun(info);
    ++counts.runs;
  }
  for (const auto& r : rows) {
    to.recordResult(runIds.at(r.runUid), r);
    ++counts.results;
  }
  for (const auto& b : baselines) {
    to.recordBaseline(runIds.at(b.runUid), b);
    ++counts.baselines;
  }
  return counts;
}

SnapshotCounts writeSnapshot(const ResultStore& from, const std::set<std::string>& gpuFingerprints,
                             const std::filesystem::path& target, bool force) {
  std::error_code ec;
  auto status = std::filesystem::symlink_status(target, ec);
  if (std::filesystem::exists(status)) {
    if (!force) throw UsageError(fmt::format("{} exists; choose a new file or pass --force", target.string()));
    if (!std::filesystem::is_regular_file(status))
      throw UsageError(fmt::format("{} is not a regular file; it was not replaced", target.string()));
  }
  std::filesystem::path tmp = target;
  tmp += fmt::format(".tmp{}", ::getpid());
  std::vector<std::unique_ptr<PendingFile>> pending;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    std::filesystem::path p = tmp;
    p += suffix;
    std::filesystem::remove(p, ec);
    pending.push_back(std::make_unique<PendingFile>(p));
  }
  SnapshotCounts counts;
  {
    auto to = openStore("sqlite:" + tmp.string(), {OpenMode::ReadWrite, OpenCheck::Header});
    counts = copySnapshot(from, *to, gpuFingerprints);
  }
  {
    // One self-contained file: a WAL database cannot be opened from a read-only directory.
    Database db(tmp, {OpenMode::ReadWrite, OpenCheck::Header});
    db.exec("PRAGMA journal_mode=DELETE");
  }
  if (force) {
    if (std::rename(tmp.c_str(), target.c_str()) != 0)
      throw IoError(fmt::format("cannot write the snapshot to {}: {}", target.string(), std::strerror(errno)));
  } else if (::link(tmp.c_str(), target.c_str()) != 0) {  // never over a file that appeared meanwhile
    if (errno == EEXIST)
      throw UsageError(fmt::format("{} exists; choose a new file or pass --force", target.string()));
    throw IoError(fmt::format("cannot write the snapshot to {}: {}", target.string(), std::strerror(errno)));
  }
  if (force) pending[0]->keep();  // renamed: nothing left under the temporary name
  return counts;
}

}  // namespace gemmtune::db
