// bench_query: how fast the results store answers best(). Builds a database of 100 000 result
// rows (or reuses FILE), then measures
//   - cold open: open read-only + header checks + the first exact best() (also with quick_check),
//   - warm lookup: a memoised best() in the same process (p50, p99).
// Run: build-db/bench/bench_query [FILE]   (default: a temporary file, removed afterwards)
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <vector>

#include "PresentBuild.hpp"
#include "Database.hpp"
#include "SqliteStore.hpp"
#include "FamilyRegistry.hpp"
#include "Lookup.hpp"
#include "ResultStore.hpp"

using namespace gemmtune;
using namespace gemmtune::db;
using namespace gemmtune::serving;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kRows = 100000;

GpuSpec benchGpu() {
  GpuSpec g;
  g.name = "NVIDIA H100 80GB HBM3";
  g.ccMajor = 9;
  g.smCount = 132;
  g.smemPerBlockOptin = 227 * 1024;
  return g;
}

void build(const std::filesystem::path& path) {
  Database db(path, {OpenMode::ReadWrite, OpenCheck::Quick});
  SqliteStore store(db);
  GpuSpec gpu = benchGpu();
  RunInfo info;
  info.gpu = gpu;
  info.driverVersion = 13000;
  info.nvrtcVersion = "13.0";
  auto run = store.beginRun(info);
  auto present = serving::presentEnvironment();
  std::vector<Config> configs;
  for (const auto& f : FamilyRegistry::builtin().all())
    for (auto& c : FamilyRegistry::enumerate(f, false))
      if (!c.violated() && f.threadsPerBlock(c) <= 1024) configs.push_back(c);
  Transaction tx(db);
  std::int64_t gpuId = store.gpus().at(0).id;
  for (int i = 0; i < kRows; ++i) {
    const Config& c = configs[static_cast<size_t>(i) % configs.size()];
    long long size = 128 * (1 + i / static_cast<int>(configs.size()));
    ResultRecord r;
    r.setConfig(c.family->name, c.name(), c.namedValues());
    r.key.gpuFingerprint = gpuFingerprint(gpu);
    r.key.driverVersion = 13000;
    r.key.nvrtcVersion = *present.nvrtcVersion;
    r.key.compileOptions = *present.compileOptionsOf(c.family->name);
    r.key.arch = "sm_90";
    r.key.sourceHash = *present.sourceHashOf(c.family->name);
    r.key.problem = {size, size, size};
    r.medianMs = 1.0 + (i * 7919 % 1000) / 100.0;
    r.registers = 40;
    r.cubin = std::string(4096, 'c');  // realistic row width: cubins dominate the file
    store.upsertResult(run, gpuId, r);
  }
  tx.commit();
  fmt::print("built {} rows over {} configs in {}\n", kRows, configs.size(), path.string());
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(p * static_cast<double>(v.size() - 1))];
}

double coldOpenUs(const std::filesystem::path& path, OpenCheck check, const PresentEnvironment& present) {
  auto t0 = Clock::now();
  Database db(path, {OpenMode::ReadOnly, check});
  SqliteStore store(db);
  Lookup lookup(store, present);
  auto r = lookup.best(benchGpu(), {4096, 4096, 4096});
  auto t1 = Clock::now();
  if (r.quality != MatchQuality::exact) fmt::print("unexpected: no exact match at 4096\n");
  return std::chrono::duration<double, std::micro>(t1 - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  std::filesystem::path path = argc > 1 ? std::filesystem::path(argv[1])
                                        : std::filesystem::temp_directory_path() /
                                              fmt::format("gemmtune-bench-{}.db", ::getpid());
  bool temporary = argc <= 1;
  if (!std::filesystem::exists(path)) build(path);
  fmt::print("database: {:.1f} MiB\n", static_cast<double>(std::filesystem::file_size(path)) / (1 << 20));

  // Source hashes are per build; computed once like a long-lived library would.
  auto present = serving::presentEnvironment();
  present.sourceHashOf(FamilyRegistry::builtin().libraryDefault().family->name);

  for (auto [check, name] : {std::pair{OpenCheck::Header, "header check"}, std::pair{OpenCheck::Quick, "quick_check"}}) {
    std::vector<double> us;
    for (int i = 0; i < 21; ++i) us.push_back(coldOpenUs(path, check, present));
    fmt::print("cold open + first best(), {:<13}: p50 {:8.1f} us   min {:8.1f} us\n", name, percentile(us, 0.5),
               percentile(us, 0.0));
  }

  Database db(path, {OpenMode::ReadOnly, OpenCheck::Header});
  SqliteStore store(db);
  Lookup lookup(store, present);
  GpuSpec gpu = benchGpu();
  lookup.best(gpu, {4096, 4096, 4096});
  std::vector<double> ns;
  for (int i = 0; i < 200000; ++i) {
    auto t0 = Clock::now();
    auto r = lookup.best(gpu, {4096, 4096, 4096});
    auto t1 = Clock::now();
    ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
    if (r.quality != MatchQuality::exact) return 1;
  }
  fmt::print("warm best() (memoised)             : p50 {:8.3f} us   p99 {:8.3f} us\n", percentile(ns, 0.5) / 1000,
             percentile(ns, 0.99) / 1000);
  auto t0 = Clock::now();
  auto near = lookup.best(gpu, {4000, 4000, 4000});
  fmt::print("first nearest_size best() (scans sizes): {:.1f} us ({})\n",
             std::chrono::duration<double, std::micro>(Clock::now() - t0).count(), toString(near.quality));
  if (temporary) {
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path.string() + suffix, ec);
  }
  return 0;
}
