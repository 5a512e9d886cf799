#include "Snapshot.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "Database.hpp"
#include "PendingFiles.hpp"

namespace gemmtune::db {

SnapshotCounts copySnapshot(const ResultStore& from, ResultStore& to, const std::set<std::string>& gpuFingerprints) {
  auto wanted = [&](const std::string& fingerprint) {
    return gpuFingerprints.empty() || gpuFingerprints.count(fingerprint) > 0;
  };
  RecordBatch batch;
  {
    // One state of the source, however many tuners write to it meanwhile.
    auto view = from.consistentReads();
    for (const auto& g : from.gpus()) {
      if (!wanted(g.fingerprint)) continue;
      if (gpuFingerprint(g.spec) != g.fingerprint)
        throw DataError(fmt::format("{}: GPU {} is stored under fingerprint {}, which does not match its fields",
                                    from.location(), g.spec.name, g.fingerprint.substr(0, 8)));
      batch.gpus.emplace(g.fingerprint, RecordBatch::Gpu{g.spec, g.firstSeen});
    }
    ResultFilter ok;
    ok.status = "ok";
    ok.withCubin = true;
    for (auto& r : from.results(ok))
      if (batch.gpus.count(r.key.gpuFingerprint)) {
        std::string run = r.runUid;
        batch.results.push_back({std::move(r), std::move(run)});
      }
    for (auto& b : from.baselines())
      if (batch.gpus.count(b.gpuFingerprint)) batch.baselines.push_back({b, b.runUid, b.gpuFingerprint});
    // Only the runs that measured a copied row or baseline, under their original uids.
    std::set<std::string> neededRuns;
    for (const auto& r : batch.results) neededRuns.insert(r.runUid);
    for (const auto& b : batch.baselines) neededRuns.insert(b.runUid);
    for (const auto& run : from.runs()) {
      if (!neededRuns.count(run.uid) || !batch.gpus.count(run.gpuFingerprint)) continue;
      RunInfo info = run;
      std::string uuid = info.gpu.uuid;
      info.gpu = batch.gpus.at(run.gpuFingerprint).spec;
      info.gpu.uuid = uuid;
      batch.runGpu.emplace(run.uid, run.gpuFingerprint);
      batch.runs.push_back(std::move(info));
    }
  }
  to.mergeBatch(batch);  // one transaction
  return {batch.gpus.size(), batch.runs.size(), batch.results.size(), batch.baselines.size()};
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
