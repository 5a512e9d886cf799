// JsonExchange: the versioned JSON file that carries GPUs, runs, results and baselines between
// machines (format: docs/db-format.md). Import checks the whole file first — every field's type
// and range, every reference, every fingerprint and cache key recomputed from its fields — and
// then writes it in one transaction, so a malformed file leaves the database untouched. Results
// merge by cache key with "measured later wins", which makes importing twice a no-op.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "Database.hpp"
#include "ResultStore.hpp"

namespace gemmtune::db {

inline constexpr const char* kExchangeFormat = "gemmtune-results";
inline constexpr int kExchangeVersion = 1;

struct ExportOptions {
  bool withCubins = true;  // base64 cubins make the file larger but let the target run without NVRTC
};

struct ExportSummary {
  std::size_t gpus = 0, runs = 0, results = 0, baselines = 0;
};

struct ImportSummary {
  std::size_t gpusAdded = 0, runsAdded = 0;
  std::size_t resultsWritten = 0;    // new, or newer than the stored measurement
  std::size_t resultsUnchanged = 0;  // the database already had this or a later measurement
  std::size_t baselinesWritten = 0, baselinesUnchanged = 0;
};

ExportSummary exportJson(Database& db, std::ostream& out, const ExportOptions& options = {});
// Writes `file` as writeOutputFile does (base/OutputFile.hpp): "-" is stdout, a regular file is
// replaced atomically, a FIFO or device is written in place; every write is checked.
ExportSummary exportJsonFile(Database& db, const std::filesystem::path& file, const ExportOptions& options = {});

// An export file after every check: what an import writes.
struct ExchangeFile {
  struct Gpu {
    GpuSpec spec;
    std::string firstSeen;
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
  std::map<std::string, Gpu> gpus;  // by fingerprint
  std::vector<RunInfo> runs;
  std::map<std::string, std::string> runGpu;  // run uid -> GPU fingerprint
  std::vector<Result> results;
  std::vector<Baseline> baselines;
};

// `source` names the input in error messages. Throws DataError for malformed input, IoError when
// the file cannot be read. Parse before opening the database, so a bad file touches nothing.
ExchangeFile parseExchange(const std::string& text, const std::string& source);
ExchangeFile readExchangeFile(const std::filesystem::path& file);
// One transaction.
ImportSummary importExchange(Database& db, const ExchangeFile& file);

}  // namespace gemmtune::db
