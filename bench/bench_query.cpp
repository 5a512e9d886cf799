// bench_query: how fast a results store answers best(), and how fast rows are written.
//   1. Builds a 100 000-row SQLite snapshot through the store API (ResultStore::recordResults, one
//      transaction), or reuses FILE, then measures
//        - cold open: open read-only + the first exact best(), through serving::Lookup and
//          through gemmtune::Library (what an application pays once per process),
//        - warm lookup: a memoised best() in the same process (p50, p99), Lookup and Library.
//   2. The same on PostgreSQL: the server named by $GEMMTUNE_BENCH_PG (postgresql://..., an empty
//      database the bench fills), else a throw-away server of its own when the PostgreSQL server
//      binaries are installed (tests/pg_server.hpp), else skipped with the reason.
//   3. Batch writes: rows/s writing one transaction per row (recordResult) against one
//      transaction for all (recordResults), on both backends.
// Run: build/bench/bench_query [FILE]   (default: a temporary file, removed afterwards)
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <vector>

#include "FamilyRegistry.hpp"
#include "GpuProfiles.hpp"
#include "Lookup.hpp"
#include "PresentEnvironment.hpp"
#include "ResultStore.hpp"
#include "gemmtune/Library.hpp"
#include "pg_server.hpp"

using namespace gemmtune;
using namespace gemmtune::db;
using namespace gemmtune::serving;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kRows = 100000;
constexpr int kBatchRows = 5000;
const ProblemKey kAsked{4096, 4096, 4096};

// Every limit of a real H100: the lookup re-validates each row against them.
GpuSpec benchGpu() { return findGpuProfile("h100")->spec; }

RunInfo benchRun() {
  RunInfo info;
  info.gpu = benchGpu();
  info.driverVersion = 13000;
  info.nvrtcVersion = "13.0";
  return info;
}

// `count` ok rows over every valid configuration at sizes 128, 256, ... (4096 among them),
// keyed for this build so that the lookup serves them. `first` shifts the keys.
std::vector<ResultRecord> benchRows(int count, int first = 0) {
  static const std::vector<Config> configs = [] {
    std::vector<Config> out;
    for (const auto& f : FamilyRegistry::builtin().all())
      for (auto& c : FamilyRegistry::enumerate(f, false))
        if (!c.violated() && f.threadsPerBlock(c) <= 1024) out.push_back(c);
    return out;
  }();
  static const PresentEnvironment present = serving::presentEnvironment();
  const GpuSpec gpu = benchGpu();
  std::vector<ResultRecord> rows;
  rows.reserve(static_cast<std::size_t>(count));
  for (int j = first; j < first + count; ++j) {
    const Config& c = configs[static_cast<std::size_t>(j) % configs.size()];
    long long size = 128 * (1 + j / static_cast<int>(configs.size()));
    ResultRecord r;
    r.setConfig(c.family->name, c.name(), c.namedValues());
    r.key.gpuFingerprint = gpuFingerprint(gpu);
    r.key.driverVersion = 13000;
    r.key.nvrtcVersion = *present.nvrtcVersion;
    r.key.compileOptions = *present.compileOptionsOf(c.family->name);
    r.key.arch = "sm_90";
    r.key.sourceHash = *present.sourceHashOf(c.family->name);
    r.key.problem = {size, size, size};
    r.medianMs = 1.0 + (j * 7919 % 1000) / 100.0;
    r.registers = 40;
    r.cubin = std::string(4096, 'c');  // realistic row width: cubins dominate the file
    r.measuredAt = "2025-01-31T12:00:00.000000Z";
    rows.push_back(std::move(r));
  }
  return rows;
}

void fill(const std::string& location, int count) {
  auto store = openStore(location, {OpenMode::ReadWrite, OpenCheck::Quick});
  auto run = store->beginRun(benchRun());
  auto t0 = Clock::now();
  for (int done = 0; done < count; done += 10000)  // 10 000 rows (40 MB of cubins) per transaction
    store->recordResults(run, benchRows(std::min(10000, count - done), done));
  store->endRun(run);
  fmt::print("built {} rows in {} in {:.1f} s\n", count, maskLocation(location),
             std::chrono::duration<double>(Clock::now() - t0).count());
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

double micros(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

// p50 and p99 of `samples` runs of `f`, in microseconds.
std::pair<double, double> timed(int samples, const std::function<void()>& f) {
  std::vector<double> us;
  us.reserve(static_cast<std::size_t>(samples));
  for (int i = 0; i < samples; ++i) {
    auto t0 = Clock::now();
    f();
    us.push_back(micros(t0));
  }
  return {percentile(us, 0.5), percentile(us, 0.99)};
}

void lookupFigures(const std::string& location, const PresentEnvironment& present) {
  const GpuSpec gpu = benchGpu();
  auto check = [](bool exact) {
    if (!exact) {
      fmt::print(stderr, "unexpected: no exact match at 4096\n");
      std::exit(1);
    }
  };
  int coldRuns = 21;
  auto [lookupCold, lookupColdP99] = timed(coldRuns, [&] {
    auto store = openStore(location, {OpenMode::ReadOnly, OpenCheck::Header});
    Lookup lookup(*store, present);
    check(lookup.best(gpu, kAsked).quality == MatchQuality::exact);
  });
  auto [libraryCold, libraryColdP99] = timed(coldRuns, [&] {
    Library lib(Library::Options{{location}});
    check(lib.best(gpu, 4096, 4096, 4096).match == Match::exact);
  });
  auto [openOnly, openOnlyP99] = timed(coldRuns, [&] { openStore(location, {OpenMode::ReadOnly, OpenCheck::Header}); });
  fmt::print("  open alone (connect, schema check)  : p50 {:9.1f} us   p99 {:9.1f} us\n", openOnly, openOnlyP99);
  fmt::print("  cold open + first best(), Lookup    : p50 {:9.1f} us   p99 {:9.1f} us\n", lookupCold, lookupColdP99);
  fmt::print("  cold open + first best(), Library   : p50 {:9.1f} us   p99 {:9.1f} us\n", libraryCold, libraryColdP99);

  auto store = openStore(location, {OpenMode::ReadOnly, OpenCheck::Header});
  Lookup lookup(*store, present);
  lookup.best(gpu, kAsked);
  auto [lookupWarm, lookupWarmP99] = timed(200000, [&] { check(lookup.best(gpu, kAsked).quality == MatchQuality::exact); });
  Library lib(Library::Options{{location}});
  lib.best(gpu, 4096, 4096, 4096);
  auto [libraryWarm, libraryWarmP99] = timed(200000, [&] { check(lib.best(gpu, 4096, 4096, 4096).match == Match::exact); });
  fmt::print("  warm best() (memoised), Lookup      : p50 {:9.3f} us   p99 {:9.3f} us\n", lookupWarm, lookupWarmP99);
  fmt::print("  warm best() (memoised), Library     : p50 {:9.3f} us   p99 {:9.3f} us\n", libraryWarm, libraryWarmP99);
  auto t0 = Clock::now();
  auto near = lookup.best(gpu, {4000, 4000, 4000});
  fmt::print("  first nearest_size best() (lists the measured sizes): {:.1f} us ({})\n", micros(t0), toString(near.quality));
}

// Rows/s for kBatchRows rows written one transaction each, then all in one (fresh keys each).
void batchFigures(const std::string& location) {
  auto store = openStore(location, {OpenMode::ReadWrite, OpenCheck::Quick});
  auto run = store->beginRun(benchRun());
  auto single = benchRows(kBatchRows, kRows), batch = benchRows(kBatchRows, kRows + kBatchRows);
  auto t0 = Clock::now();
  for (const auto& r : single) store->recordResult(run, r);
  double perRow = kBatchRows / (micros(t0) / 1e6);
  t0 = Clock::now();
  store->recordResults(run, batch);
  double batched = kBatchRows / (micros(t0) / 1e6);
  fmt::print("  {} rows, one transaction each: {:8.0f} rows/s; in one transaction: {:8.0f} rows/s ({:.1f}x)\n",
             kBatchRows, perRow, batched, batched / perRow);
}

}  // namespace

int main(int argc, char** argv) {
  std::filesystem::path path = argc > 1 ? std::filesystem::path(argv[1])
                                        : std::filesystem::temp_directory_path() /
                                              fmt::format("gemmtune-bench-{}.db", ::getpid());
  bool temporary = argc <= 1;
  if (!std::filesystem::exists(path)) fill("sqlite:" + path.string(), kRows);
  fmt::print("SQLite snapshot {}: {:.1f} MiB\n", path.string(),
             static_cast<double>(std::filesystem::file_size(path)) / (1 << 20));

  // Source hashes are per build; computed once like a long-lived library would.
  auto present = serving::presentEnvironment();
  present.sourceHashOf(FamilyRegistry::builtin().libraryDefault().family->name);
  lookupFigures(path.string(), present);
  std::filesystem::path batchFile = path;
  batchFile += ".batch";
  batchFigures("sqlite:" + batchFile.string());

  std::unique_ptr<test::PgServer> server;
  std::string pg;
  if (const char* url = std::getenv("GEMMTUNE_BENCH_PG"); url && *url) {
    pg = url;
  } else if (auto why = test::PgServer::unavailableReason(); !why.empty()) {
    fmt::print("PostgreSQL: skipped: {} (or name a server with GEMMTUNE_BENCH_PG=postgresql://...)\n", why);
  } else {
    server = std::make_unique<test::PgServer>();
    pg = server->createDatabase("bench_query");
  }
  if (!pg.empty()) {
    fmt::print("PostgreSQL {}{}:\n", maskLocation(pg), server ? " (a server of the bench's own, fsync off)" : "");
    if (openStore(pg, {OpenMode::ReadWrite, OpenCheck::Quick})->gpus().empty()) fill(pg, kRows);
    lookupFigures(pg, present);
    batchFigures(pg);
  }

  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::filesystem::remove(batchFile.string() + suffix, ec);
    if (temporary) std::filesystem::remove(path.string() + suffix, ec);
  }
  return 0;
}
