// ReportData: what the report shows, read from the results store into plain structs — the GPU,
// its runs, the current (not stale) rows, the cuBLAS baselines, and the choices the page depends
// on (heatmap family and size). Staleness follows `gemmtune results`: a row is stale when its
// cache-key parts differ from the present build or its GPU fingerprint is not the one its GPU
// name was tuned under last.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "CacheKey.hpp"
#include "Family.hpp"
#include "ResultStore.hpp"
#include "gemmtune/GpuSpec.hpp"

namespace gemmtune::report {

struct ReportQuery {
  std::string gpu;     // --gpu selector; empty: the GPU tuned most recently
  std::string family;  // heatmap family; empty: the most measured
  std::string size;    // heatmap/scatter size "N" or "MxNxK"; empty: the largest measured
};

struct MeasuredRow {
  std::string family, instance;
  std::string status;  // full status: "ok", "rejected:smem", "pruned:rank", ...
  Config config;
  size_t size = 0;  // index into ReportData::sizes
  std::optional<double> gflops, occupancy;
  std::optional<int> registers;
  std::string limiter, runUid;
  bool ok() const { return status == "ok" && gflops.has_value(); }
};

// FP32 peak = SMs × FP32 lanes per SM × 2 (an FMA is two FLOPs) × boost clock, the figure the
// speed bound holds rows to (serving::peakRate); its factors, for the chart's note.
struct Fp32Peak {
  int smCount = 0;
  int lanesPerSm = 0;
  double clockGHz = 0;
  double gflops = 0;
  double tflops() const { return gflops / 1000.0; }
};

// Absent when the stored spec lacks the SM count or the clock, or its architecture's lanes are
// unknown.
std::optional<Fp32Peak> fp32Peak(const GpuSpec& gpu);

// "4096" when M = N = K, else "4096x1024x512"; a layout, batch or beta class other than the
// defaults is appended ("4096 tn batch 64 beta=zero").
std::string sizeLabel(const db::ProblemKey& p);

struct ReportData {
  std::filesystem::path dbPath;
  GpuSpec gpu;
  std::string fingerprint;
  std::vector<db::StoredRun> runs;     // of this GPU, oldest first
  std::map<std::string, size_t> rowsPerRun;  // run uid -> current rows it measured
  std::vector<std::string> otherGpus;  // names of other GPUs in the database
  std::vector<db::ProblemKey> sizes;   // measured problems by layout and batch, each smallest (M·N·K) first
  std::vector<std::string> families;   // with current rows, sorted
  std::vector<MeasuredRow> rows;       // current rows of this GPU, every status
  std::map<size_t, double> cublasGflops;  // size index -> latest cuBLAS baseline
  std::size_t staleRows = 0;
  std::map<std::string, size_t> staleReasons;  // reason -> rows
  std::string heatmapFamily;
  size_t chosenSize = 0;
  std::optional<Fp32Peak> peak;

  // The fastest ok row of `family` at size `size`; null when none.
  const MeasuredRow* best(size_t size, const std::string& family) const;
};

// Throws Error (exit 1) when the GPU has no current rows or the chosen size/family has none,
// UsageError for a selector that matches no GPU or an unknown family.
ReportData loadReportData(const db::ResultStore& store, const std::filesystem::path& dbPath, const ReportQuery& query,
                          const db::PresentEnvironment& present);

}  // namespace gemmtune::report
