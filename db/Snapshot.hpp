// Snapshot: the rows that serve some GPUs, copied from any results store into a new SQLite file
// that the library loads offline (`gemmtune db snapshot`, issue 14 item 3). Everything goes
// through the ResultStore interface: the GPUs, the runs that measured the copied rows, the ok
// results with their cubins, and the cuBLAS baselines. Failures (rejected, compile_error, ...)
// stay behind: the library serves only ok rows, and a deployment snapshot is not a base for
// `tune --resume`.
#pragma once

#include <filesystem>
#include <set>
#include <string>

#include "ResultStore.hpp"

namespace gemmtune::db {

struct SnapshotCounts {
  std::size_t gpus = 0, runs = 0, results = 0, baselines = 0;
};

// Copies into `to`, in one transaction, the rows of the GPUs whose fingerprints are in
// `gpuFingerprints` (empty: all), as one consistent state of `from`.
SnapshotCounts copySnapshot(const ResultStore& from, ResultStore& to, const std::set<std::string>& gpuFingerprints);

// Writes the snapshot to `target` (a SQLite file): built under a temporary name next to it,
// switched to a single self-contained file (no -wal, so it opens read-only from a read-only
// directory), then renamed into place; an interrupted or failed snapshot leaves nothing. An
// existing `target` is refused (UsageError) unless `force`.
SnapshotCounts writeSnapshot(const ResultStore& from, const std::set<std::string>& gpuFingerprints,
                             const std::filesystem::path& target, bool force);

}  // namespace gemmtune::db
