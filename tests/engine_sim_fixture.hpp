// The fixture of the engine's tests on a simulated GPU (tests/fake_worker `table`: times computed
// from the instance name and problem, NVRTC compiling for sm_90 on this machine): a run's search
// options, a tune into any store, and the rows it left.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "Compiler.hpp"
#include "FamilyRegistry.hpp"
#include "GpuDetect.hpp"
#include "ResultStore.hpp"
#include "Shard.hpp"
#include "TuningEngine.hpp"
#include "scratch_dir.hpp"

namespace gemmtune::test {

struct Search {
  std::string strategy = "exhaustive";  // every candidate at every size: shards then measure exactly what one run does
  int carry = 0;
  std::vector<GemmShape> sizes{{256, 256, 256}, {512, 512, 512}};
  std::vector<const char*> families{"smem", "blocktile2d"};
  double budgetSec = 0;
  int finalists = 3;
  bool resume = true;
  bool prune = false;
  const char* gpu = "table";  // the fake worker's mode
  int gpus = 1;               // identical simulated GPUs sharing the run; each worker's state in gpu<i>/
};

class EngineSim : public ::testing::Test {
 protected:
  // Every ok row of a kernel in `store` as "instance at size" (cuBLAS's rows, one per size and
  // prepared by whichever shard tunes there first, are tests/engine_cublas_test's).
  static std::multiset<std::string> okRows(const std::filesystem::path& dbPath) {
    auto store = db::openStore(dbPath.string(), {db::OpenMode::ReadOnly});
    std::multiset<std::string> out;
    for (const auto& r : store->results({}))
      if (r.status == "ok" && r.family != "cublas") out.insert(r.instance() + " at " + std::to_string(r.key.problem.m));
    return out;
  }

  GpuOutcome tune(const std::filesystem::path& dbPath, std::optional<ShardSpec> shard = std::nullopt, Search search = {}) {
    return tuneInto(dbPath.string(), shard, search);
  }

  // Into any store location (a path, sqlite:PATH, postgresql://...).
  GpuOutcome tuneInto(const std::string& location, std::optional<ShardSpec> shard = std::nullopt, Search search = {}) {
    auto store = db::openStore(location, {db::OpenMode::ReadWrite});
    return tuneWith(*store, shard, search);
  }

  GpuOutcome tuneWith(db::ResultStore& store, std::optional<ShardSpec> shard, const Search& search) {
    Compiler compiler(CompilerOptions{{}, dir_.path() / "cache", 0});
    TuneOptions options;
    options.sizes = search.sizes;
    for (const char* f : search.families) options.families.push_back(&FamilyRegistry::builtin().get(f));
    options.strategy = search.strategy;
    options.carry = search.carry;
    options.budgetSec = search.budgetSec;
    options.finalists = search.finalists;
    options.resume = search.resume;
    options.filter.prune = search.prune;
    options.basis = false;  // the sizes' search alone (the basis: engine_basis_test)
    const std::string state = search.gpus == 1 ? dir_.path().string() : (dir_.path() / "gpu{device}").string();
    options.simulated = TuneOptions::SimulatedGpu{{GEMMTUNE_FAKE_WORKER, search.gpu, state}, 13000};
    options.commandLine = "engine_sim_test";
    if (shard) options.units = unitsOf(workUnits(options.sizes, options.families), *shard);
    ProgressLine progress(false);
    std::atomic<bool> stop{false};
    std::vector<GpuSpec> gpus;
    for (int i = 0; i < search.gpus; ++i) {
      gpus.push_back(resolveGpu("h100"));
      if (search.gpus > 1) {
        gpus.back().deviceIndex = i;
        gpus.back().uuid = "simulated-" + std::to_string(i);
      }
    }
    TuningEngine engine(gpus, compiler, store, options, progress, stop);
    return engine.run();
  }

  // Status of every kernel's row of `store` at size m: "instance" -> "status".
  static std::map<std::string, std::string> statuses(const std::filesystem::path& dbPath, long long m) {
    auto store = db::openStore(dbPath.string(), {db::OpenMode::ReadOnly});
    std::map<std::string, std::string> out;
    for (const auto& r : store->results({}))
      if (r.key.problem.m == m && r.family != "cublas") out[r.instance()] = r.fullStatus();
    return out;
  }

  static int retimedAt(const std::filesystem::path& dbPath, long long m) {
    int n = 0;
    for (const auto& [instance, status] : statuses(dbPath, m)) n += status == "ok:retimed";
    return n;
  }
  static bool hasCublasRow(const std::filesystem::path& dbPath, long long m) {
    auto store = db::openStore(dbPath.string(), {db::OpenMode::ReadOnly});
    for (const auto& r : store->results({}))
      if (r.key.problem.m == m && r.family == db::kCublasFamily) return true;
    return false;
  }

  ScratchDir dir_;
};


}  // namespace gemmtune::test
