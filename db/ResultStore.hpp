// ResultStore: the results-store interface — the tuner's writes (GPUs, runs, one result per
// candidate and problem, cuBLAS baselines) and the reads behind `results`, `query`, `export`,
// `--resume` and the library. SQL lives only in its implementations (db/SqlStore.hpp: SQLite
// through db::Database, PostgreSQL through db::PgConnection); openStore() picks one from a
// location string.
//
// A result is identified by its cache key: the store keeps one row per key, and a write or an
// import replaces a row only with a measurement taken later (ties keep the stored row), so
// re-importing a file changes nothing and an old file never overwrites a newer measurement.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "CacheKey.hpp"
#include "gemmtune/Errors.hpp"
#include "OpenOptions.hpp"
#include <utility>
#include "gemmtune/GpuSpec.hpp"

namespace gemmtune::db {

struct RunInfo {
  GpuSpec gpu;
  int driverVersion = 0;
  std::string nvrtcVersion;
  std::string toolVersion;  // empty: this build's version
  std::string commandLine;
  std::string host;         // empty: this host's name
  std::string uid;          // empty: a new random id (import passes the original)
  std::string startedAt;    // empty: now
  std::string endedAt;      // empty: still running
};

struct ResultRecord {
  CacheKey key;  // GPU fingerprint, versions, source hash, instance, problem
  std::string family;
  std::string params = "{}";  // JSON object, e.g. {"BM":64,"BN":64,"BK":8,"TM":8}
  // "ok", "rejected", "compile_error", "launch_error", "runtime_fault", "timeout",
  // "worker_died", "wrong_result", "pruned"; the part after ':' goes to statusReason.
  std::string status = "ok";
  std::string statusReason;
  std::string errorText;  // compile log, error text, max error explanation
  std::optional<double> medianMs, minMs, spread;
  std::optional<int> reps;
  bool partial = false;
  std::optional<double> gflops;  // computed from medianMs and the problem when absent
  std::optional<double> maxError;
  std::optional<int> smClockMHz, threadsPerBlock, registers, staticSmemBytes, dynamicSmemBytes, stackFrameBytes,
      spillStoreBytes, spillLoadBytes;
  std::optional<double> occupancy;  // 0..1
  std::string limiter;              // "threads", "registers", "shared memory", ...
  std::string loweredName;          // every kernel's entry point, space-separated, main first
  std::string cubin;                // ELF bytes; empty when not kept
  std::string measuredAt;           // empty: now

  const std::string& instance() const { return key.instance; }
  // "rejected:smem" -> status "rejected", reason "smem".
  void setStatus(std::string_view full);
  std::string fullStatus() const;
  // Family, instance name and parameters (name, value) of a configuration.
  void setConfig(std::string family, std::string instance, const std::vector<std::pair<std::string, int>>& namedValues);
};

struct StoredResult : ResultRecord {
  std::int64_t id = 0, runId = 0, gpuId = 0;
  std::string cacheKeyHash;
  std::string gpuName;
  std::string runUid;
};

struct StoredGpu {
  std::int64_t id = 0;
  std::string fingerprint;
  GpuSpec spec;
  std::string firstSeen;
  std::string lastRunAt;  // empty when no run recorded
};

// cuBLAS as a candidate: the tuner measures it beside every size and stores it as a row of family
// "cublas", instance "cublas_<layout>" (no parameters, no binary); serving answers with it.
inline constexpr std::string_view kCublasFamily = "cublas";
std::string cublasInstance(std::string_view layout);
// One of cuBLASLt's configurations, faster than cuBLAS's own choice there (the tuner searches
// them beside the baseline): "cublas_<layout>_<algo>", where `algo` is a CublasLtAlgo name
// ("lt55_t18_k2_..."; device/CublasLtAlgo reads it, db only stores it).
inline constexpr std::string_view kCublasLtPrefix = "lt";
std::string cublasLtInstance(std::string_view layout, std::string_view algo);
// The configuration `instance` names when it is one of cuBLASLt's in `layout` (cublasLtInstance's
// `algo`, a view into `instance`: the library reads it on every call), else empty.
std::string_view cublasLtAlgoOf(std::string_view instance, std::string_view layout);
// A row named as either of the above for its own layout.
bool isCublasRow(const ResultRecord& row);

struct StoredRun : RunInfo {
  std::int64_t id = 0;
  std::string gpuFingerprint;
};

struct BaselineRecord {
  std::string library = "cublas";
  std::string libraryVersion;
  ProblemKey problem;
  double medianMs = 0;
  double gflops = 0;  // computed from medianMs when 0
  std::string measuredAt;  // empty: now
};

struct StoredBaseline : BaselineRecord {
  std::string gpuFingerprint;
  std::string runUid;
};

struct ResultFilter {
  std::optional<std::int64_t> gpuId;
  std::optional<long long> m, n, k;
  std::optional<std::string> family;
  std::vector<std::string> notFamilies;  // rows of none of these (a caller's precision leaves them out)
  std::optional<std::string> status;  // "ok", or a full status "rejected:smem"
  std::optional<std::string> layout, betaClass;
  std::optional<long long> batch;
  bool withCubin = false;
  // At most this many rows, in results()' order (a lookup needs the fastest few, not all of a
  // size's rows: each carries its cubin in the same table row).
  std::optional<int> limit;
};

// Rows brought from elsewhere — an export file, another store — that mergeBatch() writes in one
// transaction, keeping their GPUs' first-seen times and their runs' uids.
struct RecordBatch {
  struct Gpu {
    GpuSpec spec;
    std::string firstSeen;  // empty: now
  };
  struct Result {
    ResultRecord record;
    std::string runUid;
  };
  struct Baseline {
    BaselineRecord record;
    std::string runUid;
    std::string gpuFingerprint;
  };
  std::map<std::string, Gpu> gpus;            // by fingerprint
  std::vector<RunInfo> runs;                  // each with its uid
  std::map<std::string, std::string> runGpu;  // run uid -> GPU fingerprint
  std::vector<Result> results;
  std::vector<Baseline> baselines;
};

struct MergeSummary {
  std::size_t gpusAdded = 0, runsAdded = 0;
  std::size_t resultsWritten = 0;    // new, or newer than the stored measurement
  std::size_t resultsUnchanged = 0;  // the store already had this or a later measurement
  std::size_t baselinesWritten = 0, baselinesUnchanged = 0;
};

// A problem the library served without an exact row (a nearest size or the built-in default):
// how many calls, and their estimated time (docs/library.md, "Recorded shapes").
struct SeenRecord {
  ProblemKey problem;
  std::int64_t calls = 0;
  double timeMs = 0;
};

struct StoredSeen : SeenRecord {
  std::int64_t gpuId = 0;
  std::string gpuFingerprint, gpuName;
  std::string firstSeen, lastSeen;  // UTC, as every time stamp
};

struct SeenFilter {
  std::optional<std::int64_t> gpuId;
  std::optional<int> limit;  // the first this many, in seen()'s order
};

// Thrown when the connection to a server store broke (the server restarted, the network went)
// and could not be re-established: the rows committed before it are kept, so running the same
// command again (`tune --resume`) continues where it stopped. Exit code 74, like other I/O.
struct StoreConnectionLost : IoError {
  using IoError::IoError;
};

// While one is held, every read through the store that made it sees the same committed state
// (see ResultStore::consistentReads). Releasing it ends that view.
class ReadView {
 public:
  virtual ~ReadView() = default;
};

// Statuses after which `tune --resume` does not measure the candidate again. `worker_died`
// (the worker may have died for another reason) and `pruned` (relative to that run's best so
// far) are not final.
bool isFinalStatus(std::string_view status);
// Throws DataError naming the first field that is out of range or inconsistent.
void validateResult(const ResultRecord& r);

// The whole call's rate: batch × 2·M·N·K floating-point operations in medianMs.
double gflopsOf(const ProblemKey& p, double medianMs);

class ResultStore {
 public:
  virtual ~ResultStore() = default;

  // Where the store lives, for messages: a file path, or a URL with its password masked.
  virtual const std::string& location() const = 0;
  // False for a new store opened read-only: it has no tables, hence no results.
  virtual bool hasSchema() const = 0;

  // --- for the tuner: each call is its own transaction -----------------------------------
  virtual std::int64_t recordGpu(const GpuSpec& gpu) = 0;
  virtual std::int64_t beginRun(const RunInfo& run) = 0;
  virtual void endRun(std::int64_t runId) = 0;
  // Validates, then stores `r` unless a measurement of the same cache key taken later is
  // stored. Returns true when the row was written. The key's GPU must be the run's GPU.
  virtual bool recordResult(std::int64_t runId, const ResultRecord& r) = 0;
  virtual bool recordBaseline(std::int64_t runId, const BaselineRecord& b) = 0;
  // Many results of one run in one transaction (all or none): each validated, then written as
  // recordResult() would. Returns how many were written.
  virtual std::size_t recordResults(std::int64_t runId, std::span<const ResultRecord> records) = 0;
  // Merges `batch` in one transaction (all or none): GPUs by fingerprint, runs by uid (an existing
  // uid keeps its row, an end time is filled in if missing), results and baselines where they are
  // new or measured later. Every result is validated and must name its run's GPU; a run uid or
  // GPU fingerprint missing from the batch is a DataError. Nothing is written then.
  virtual MergeSummary mergeBatch(const RecordBatch& batch) = 0;

  // The library's record of problems served without an exact row: adds each record's calls and
  // time to the stored row of `gpu` and its problem (made on first sight, the GPU too) and sets its
  // last-seen time, in one transaction. Not retried after a lost connection, unlike the writes
  // above: adding is not idempotent, and a count lost is better than a count doubled.
  virtual void recordSeen(const GpuSpec& gpu, std::span<const SeenRecord> records) = 0;
  // Removes the recorded problems of one GPU (all without one); returns how many rows went.
  virtual std::size_t clearSeen(std::optional<std::int64_t> gpuId) = 0;

  // --resume: cache key hash -> full status, for rows of this GPU with a final status. A
  // candidate whose CacheKey::hash() is present needs no new measurement.
  virtual std::unordered_map<std::string, std::string> finalStatuses(const GpuSpec& gpu) const = 0;

  // --- reads ------------------------------------------------------------------------------
  // Reads made while the returned view is held see one committed state, however many queries
  // they take and whatever writers commit meanwhile (export, snapshot, a lookup's several
  // queries). Views nest (an inner one is part of the outer one). Do not write through this
  // store object while one is held.
  virtual std::unique_ptr<ReadView> consistentReads() const = 0;
  virtual std::vector<StoredGpu> gpus() const = 0;
  virtual std::optional<std::int64_t> gpuId(const std::string& fingerprint) const = 0;
  virtual std::vector<StoredRun> runs() const = 0;
  virtual std::vector<StoredResult> results(const ResultFilter& filter) const = 0;
  // The distinct problems among the rows the filter selects (its m, n, k ignored; its layout and
  // batch applied).
  virtual std::vector<ProblemKey> measuredSizes(const ResultFilter& filter) const = 0;
  virtual std::string cubinOf(std::int64_t resultId) const = 0;
  virtual std::vector<StoredBaseline> baselines() const = 0;
  // The recorded problems, most time first (then most calls, then by problem).
  virtual std::vector<StoredSeen> seen(const SeenFilter& filter) const = 0;
  // The latest baseline GFLOP/s for this GPU and problem, when one was measured.
  virtual std::optional<double> baselineGflops(std::int64_t gpuId, const ProblemKey& p,
                                               std::string_view library = "cublas") const = 0;
};

// Opens the store at `location`: a path or `sqlite:PATH` (the embedded default), or
// `postgresql://user[:password]@host[:port]/db` (also `postgres://`). A foreign or newer schema
// is refused untouched (DataError, exit 65); ReadWrite creates or migrates the schema.
std::unique_ptr<ResultStore> openStore(const std::string& location, OpenOptions options);

// The SQLite file a location names; nullopt for a server.
std::optional<std::string> sqliteFileOf(const std::string& location);
// False only for a SQLite file that does not exist (a reader has nothing to show).
bool storeMayExist(const std::string& location);
bool isPostgresLocation(std::string_view location);
// Whether this build can open postgresql:// locations (libpq was found at build time).
bool postgresqlSupported();
// `location` with any password replaced by "***", safe for logs and error messages.
std::string maskLocation(std::string_view location);

}  // namespace gemmtune::db
