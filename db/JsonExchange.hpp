// JsonExchange: the versioned JSON file that carries GPUs, runs, results and baselines between
// machines (format: docs/db-format.md), to and from any results store (SQLite or PostgreSQL,
// through the ResultStore interface). Import checks the whole file first — every field's type
// and range, every reference, every fingerprint and cache key recomputed from its fields — and
// then writes it in one transaction (ResultStore::mergeBatch), so a malformed file leaves the
// store untouched. Results merge by cache key with "measured later wins", which makes importing
// twice a no-op. Export reads one consistent state of the store, even while tuners write.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "ResultStore.hpp"

namespace gemmtune::db {

inline constexpr const char* kExchangeFormat = "gemmtune-results";
// 2: every result and baseline carries `batch`. Version 1 files (no batch) still import, as batch 1.
inline constexpr int kExchangeVersion = 2;

struct ExportOptions {
  bool withCubins = true;  // base64 cubins make the file larger but let the target run without NVRTC
};

struct ExportSummary {
  std::size_t gpus = 0, runs = 0, results = 0, baselines = 0;
};

using ImportSummary = MergeSummary;

ExportSummary exportJson(const ResultStore& store, std::ostream& out, const ExportOptions& options = {});
// Writes `file` as writeOutputFile does (base/OutputFile.hpp): "-" is stdout, a regular file is
// replaced atomically, a FIFO or device is written in place; every write is checked.
ExportSummary exportJsonFile(const ResultStore& store, const std::filesystem::path& file,
                             const ExportOptions& options = {});

// An export file after every check: what an import writes.
using ExchangeFile = RecordBatch;

// `source` names the input in error messages. Throws DataError for malformed input, IoError when
// the file cannot be read. Parse before opening the database, so a bad file touches nothing.
ExchangeFile parseExchange(const std::string& text, const std::string& source);
ExchangeFile readExchangeFile(const std::filesystem::path& file);
// One transaction.
ImportSummary importExchange(ResultStore& store, const ExchangeFile& file);

}  // namespace gemmtune::db
