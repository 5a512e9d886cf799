// search_quality: how close each search strategy comes to the exhaustive best, and what it costs.
// Runs `exhaustive` first, then every other strategy, on the same GPU, families and sizes, each
// into a fresh results store, with one shared compile cache (compile time does not favour the
// later runs' wall time unfairly: every run after the first compiles nothing). Quality is taken
// from the exhaustive run's own measurements, so noise between runs cannot flatter a strategy:
// quality = exhaustive time of the exhaustive winner / exhaustive time of the strategy's pick.
// Exhaustive's own single timings carry a few per cent of noise, so where the picks differ they
// are then timed head to head (interleaved rounds, one process): quality there = time of the
// fastest of the picks / time of the strategy's pick (1.000 for every strategy when they agree).
//
// Run: build/bench/search_quality [--families blocktile1d] [--sizes 1024..8192]
//        [--strategies model,random] [--carry 24] [--rounds 7] [--gpu auto]
//        [--exhaustive-sizes 8192] (exhaustive at these sizes only, the others at every size of
//        --sizes: the model's quality at 8192 after learning at 1024..4096)
//        [--work DIR] (keep the stores and compile cache there: a second run resumes the
//        exhaustive store and runs the other strategies afresh, so an exhaustive baseline too
//        long for one command is built over several; --strategies "" runs exhaustive alone)
//      (--simulate FAKE_WORKER: the tests' simulated GPU, no GPU needed)
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <stdlib.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <map>

#include "Compiler.hpp"
#include "ExitCodes.hpp"
#include "FamilyRegistry.hpp"
#include "GpuDetect.hpp"
#include "HeadToHead.hpp"
#include "ResultStore.hpp"
#include "TuningEngine.hpp"
#include "WorkerClient.hpp"

using namespace gemmtune;
namespace fs = std::filesystem;

namespace {

struct Args {
  std::string families = "blocktile1d", sizes = "1024..8192", strategies = "model,random", gpu = "auto";
  std::string exhaustiveSizes;  // empty: --sizes
  std::string work;             // empty: a temporary directory, removed at the end
  std::string gemmtune = GEMMTUNE_PROGRAM, simulate;
  int carry = 24, rounds = 7;
};

std::vector<std::string> splitList(const std::string& list) {
  std::vector<std::string> out;
  for (size_t start = 0; start <= list.size();) {
    size_t comma = list.find(',', start);
    out.push_back(list.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// Median time of every ok row of a store, by "family|instance at size".
std::map<std::string, double> okTimes(const std::string& location) {
  std::map<std::string, double> out;
  auto store = db::openStore(location, {db::OpenMode::ReadOnly});
  for (const auto& r : store->results({}))
    if (r.status == "ok" && r.medianMs)
      out[r.family + "|" + r.instance() + " at " + GemmShape{r.key.problem.m, r.key.problem.n, r.key.problem.k}.str()] =
          *r.medianMs;
  return out;
}

// The fake worker's command line: the simulated GPU's table mode, its state under `work`.
std::vector<std::string> simulatedWorker(const Args& a, const fs::path& work) {
  return {a.simulate, "table", work.string()};
}

// A run's pick for `family` at `shape`, by shape (a run cut short, or exhaustive run at fewer
// sizes, lacks some); empty when it has none.
std::string pickOf(const GpuOutcome& outcome, const GemmShape& shape, const std::string& family) {
  for (const SizeOutcome& size : outcome.sizes)
    if (size.shape.str() == shape.str())
      for (const FamilyOutcome& fo : size.families)
        if (fo.family == family) return fo.bestInstance;
  return {};
}

struct Run {
  std::string strategy, location;
  GpuOutcome outcome;
};

// Where the strategies' picks differ at a size, they are timed against each other in one worker.
void printHeadToHead(const Args& a, const GpuSpec& gpu, const Compiler& compiler, const fs::path& work,
                     const std::vector<Run>& runs) {
  std::unique_ptr<WorkerClient> worker;
  bool header = false;
  const auto& sizes = runs.front().outcome.sizes;
  for (size_t s = 0; s < sizes.size(); ++s) {
    const GemmShape& shape = sizes[s].shape;
    for (const FamilyOutcome& exh : sizes[s].families) {
      std::vector<std::string> picks;  // per run, in run order
      std::vector<std::string> distinct;
      for (const Run& run : runs) {
        const std::string pick = pickOf(run.outcome, shape, exh.family);
        picks.push_back(pick);
        if (!pick.empty() && std::find(distinct.begin(), distinct.end(), pick) == distinct.end()) distinct.push_back(pick);
      }
      if (distinct.size() < 2) continue;
      if (!worker) {
        worker = a.simulate.empty()
                     ? std::make_unique<WorkerClient>(gpu.deviceIndex, a.gemmtune)
                     : std::make_unique<WorkerClient>(simulatedWorker(a, work));
      }
      worker->setProblem(Problem::of(shape));
      std::vector<Config> configs;
      for (const auto& name : distinct) configs.push_back(FamilyRegistry::builtin().parseName(name));
      TimingPolicy policy;
      policy.warmupMs = 20;
      policy.budgetMs = 60;
      const auto times = timeHeadToHead(*worker, compiler, gpu.arch(), configs, shape, a.rounds, policy);
      std::optional<double> fastest;
      for (const auto& t : times)
        if (t && (!fastest || *t < *fastest)) fastest = t;
      if (!header) {
        fmt::print("\nhead to head where the picks differ ({} interleaved rounds; quality = fastest pick / this pick)\n",
                   a.rounds);
        fmt::print("{:<11} {:<8} {:<12} {:>9} {:>9}  {}\n", "strategy", "size", "family", "ms", "quality", "pick");
        header = true;
      }
      for (size_t r = 0; r < runs.size(); ++r) {
        const size_t d = std::find(distinct.begin(), distinct.end(), picks[r]) - distinct.begin();
        std::string ms = "-", quality = "-";
        if (d < times.size() && times[d]) {
          ms = fmt::format("{:.4f}", *times[d]);
          quality = fmt::format("{:.3f}", fastest.value_or(*times[d]) / *times[d]);
        }
        fmt::print("{:<11} {:<8} {:<12} {:>9} {:>9}  {}\n", runs[r].strategy, shape.str(), exh.family, ms, quality,
                   picks[r].empty() ? "-" : picks[r]);
      }
      std::fflush(stdout);
    }
  }
  if (!header) fmt::print("\nevery strategy picked exhaustive's winner at every size\n");
}

// Each run's rows as soon as it ends (the exhaustive one first): a run cut short by a time
// limit still leaves what was finished. `reference`: the exhaustive run's times.
void printRun(const Run& run, const Run& exhaustive, const std::map<std::string, double>& reference) {
  for (const SizeOutcome& size : run.outcome.sizes) {
    for (const FamilyOutcome& fo : size.families) {
      std::string quality = "-";
      // By shape: exhaustive may have run at fewer sizes (--exhaustive-sizes).
      const std::string exhPick = pickOf(exhaustive.outcome, size.shape, fo.family);
      if (!exhPick.empty() && !fo.bestInstance.empty()) {
        auto best = reference.find(fo.family + "|" + exhPick + " at " + size.shape.str());
        auto pick = reference.find(fo.family + "|" + fo.bestInstance + " at " + size.shape.str());
        if (best != reference.end() && pick != reference.end()) quality = fmt::format("{:.3f}", best->second / pick->second);
      }
      int timed = 0;
      if (auto it = fo.statusCounts.find("ok"); it != fo.statusCounts.end()) timed = it->second;
      fmt::print("{:<11} {:<8} {:<12} {:>7} {:>9}  {}\n", run.strategy, size.shape.str(), fo.family, timed, quality,
                 fo.bestInstance);
    }
  }
  fmt::print("{:<11} total: GPU busy {:.1f} s, wall {:.1f} s\n", run.strategy, run.outcome.gpuBusySeconds,
             run.outcome.wallSeconds);
  std::fflush(stdout);
}

// One tuning run of `strategy` into its own store under `work`.
Run runStrategy(const Args& a, const std::string& strategy, const GpuSpec& gpu, Compiler& compiler,
                const fs::path& work) {
  TuneOptions options;
  options.sizes = parseSizes(strategy == "exhaustive" && !a.exhaustiveSizes.empty() ? a.exhaustiveSizes : a.sizes);
  for (const auto& f : splitList(a.families)) options.families.push_back(&FamilyRegistry::builtin().get(f));
  options.strategy = strategy;
  options.carry = a.carry;
  options.selfExe = a.gemmtune;
  options.commandLine = "search_quality --strategy " + strategy;
  options.basis = false;  // the strategies' searches alone
  if (!a.simulate.empty()) options.simulated = TuneOptions::SimulatedGpu{simulatedWorker(a, work), 13000};
  const fs::path path = work / (strategy + ".db");
  if (strategy != "exhaustive")  // each strategy searches afresh; exhaustive's store may be resumed
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path.string() + suffix);
  const std::string location = "sqlite:" + path.string();
  auto store = db::openStore(location, {db::OpenMode::ReadWrite});
  ProgressLine progress(false);
  std::atomic<bool> stop{false};
  TuningEngine engine(gpu, compiler, *store, options, progress, stop);
  return {strategy, location, engine.run()};
}

void addOptions(CLI::App& app, Args& a) {
  app.add_option("--families", a.families, "Comma-separated families")->capture_default_str();
  app.add_option("--sizes", a.sizes, "Sizes in the tune grammar")->capture_default_str();
  app.add_option("--exhaustive-sizes", a.exhaustiveSizes,
                 "Sizes exhaustive runs at (default: --sizes); quality is reported at these only");
  app.add_option("--strategies", a.strategies, "Strategies compared with exhaustive")->capture_default_str();
  app.add_option("--work", a.work, "Keep stores and compile cache here; exhaustive's store is resumed by the next run");
  app.add_option("--carry", a.carry, "--carry of the strategies")->capture_default_str();
  app.add_option("--rounds", a.rounds, "Interleaved rounds of the head-to-head timing")->capture_default_str();
  app.add_option("--gpu", a.gpu, "auto or a CUDA ordinal")->capture_default_str();
  app.add_option("--gemmtune", a.gemmtune, "The gemmtune program (its worker and compile processes)")->capture_default_str();
  app.add_option("--simulate", a.simulate, "A fake worker program (tests/fake_worker): the simulated GPU");
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  CLI::App app{"How close each search strategy comes to the exhaustive best, and at what cost"};
  addOptions(app, a);
  CLI11_PARSE(app, argc, argv);
  try {
    char tmpl[] = "/tmp/gemmtune-search-quality-XXXXXX";
    const fs::path work = a.work.empty() ? fs::path(::mkdtemp(tmpl)) : fs::path(a.work);
    fs::create_directories(work);
    const GpuSpec gpu = resolveGpu(a.simulate.empty() ? a.gpu : "h100");
    Compiler compiler({{}, work / "cache", 0, a.gemmtune});
    std::vector<std::string> strategies{"exhaustive"};
    for (const auto& s : splitList(a.strategies))
      if (!s.empty() && s != "exhaustive") strategies.push_back(s);

    std::vector<Run> runs;
    std::map<std::string, double> reference;  // the exhaustive run's times
    for (const auto& strategy : strategies) {
      runs.push_back(runStrategy(a, strategy, gpu, compiler, work));
      if (runs.size() == 1) {
        reference = okTimes(runs.front().location);
        fmt::print("search quality on {}, families {}, sizes {} (exhaustive at {}), --carry {}\n",
                   runs.front().outcome.gpuName, a.families, a.sizes, a.exhaustiveSizes.empty() ? a.sizes : a.exhaustiveSizes,
                   a.carry);
        fmt::print("{:<11} {:<8} {:<12} {:>7} {:>9}  {}\n", "strategy", "size", "family", "timed", "quality", "pick");
      }
      printRun(runs.back(), runs.front(), reference);
    }
    if (runs.size() > 1) printHeadToHead(a, gpu, compiler, work, runs);
    if (a.work.empty()) fs::remove_all(work);
    return 0;
  } catch (const Error& e) {
    fmt::print(stderr, "search_quality: {}\n", e.what());
    return exitCodeOf(e);
  }
}
