// `gemmtune tune`: the main job — tune every requested family at every requested size on the
// chosen GPU(s) and keep each candidate's outcome in the results database.
#include <fmt/format.h>

#include <cmath>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <deque>
#include <optional>
#include <sstream>
#include <csignal>
#include <thread>

#include "FamilyHelp.hpp"
#include "CliContext.hpp"
#include "CacheKey.hpp"
#include "CandidateSpace.hpp"
#include "CudaDriver.hpp"
#include "Database.hpp"
#include "DbPath.hpp"
#include "FamilyRegistry.hpp"
#include "HeaderTrees.hpp"
#include "GpuDetect.hpp"
#include "GpuSelect.hpp"
#include "SeenCommand.hpp"
#include "ShapeFile.hpp"
#include "Shard.hpp"
#include "TuneReport.hpp"
#include "TuningEngine.hpp"
#include "search/SearchStrategy.hpp"
#include "ExitCodes.hpp"
#include "Quote.hpp"

namespace gemmtune::cli {

namespace {

std::atomic<bool> gStop{false};
std::atomic<int> gSignal{0};

extern "C" void onSignal(int sig) {
  gSignal = sig;
  gStop = true;
}

struct TuneArgs {
  std::string gpu = "auto", sizes = "1024..8192", shapes, mnk, families, params, db, shard, strategy = "model";
  std::string layouts = "nn", batch = "1", precision = "strict";
  double budget = 0;
  int carry = 24;
  bool fresh = false, resume = false, json = false, prune = false, noBasis = false, seen = false;
};

// The kernel families `--families` names. "cublas" is none (it has no template): it makes cuBLAS a
// candidate — verified and recorded as a row of family "cublas" at every size (`cublasRows`); "all"
// and an empty list include it. Its baseline is timed whatever the list.
// Families of a precision class above `precision` (tf32x3 under strict) are left out of "all"
// and refused by name.
std::vector<const Family*> parseFamilies(const std::string& list, bool& cublasRows, PrecisionClass precision) {
  const auto& reg = FamilyRegistry::builtin();
  std::vector<const Family*> out;
  cublasRows = list.empty() || list == "all";
  if (cublasRows) {
    for (const auto& f : reg.all()) {
      if (f.precision > precision) continue;
      if (auto why = unavailableReason(f)) {
        spdlog::warn("family {} skipped: {}", f.name, *why);
        continue;
      }
      out.push_back(&f);
    }
    return out;
  }
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    std::string name = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (name == db::kCublasFamily) {
      cublasRows = true;
    } else {
      const Family* f = &reg.get(name);  // throws UsageError listing the choices
      requirePrecision(*f, precision);
      if (auto why = unavailableReason(*f))
        throw UnavailableError(fmt::format("family {} is unavailable here: {}", name, *why));
      if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (out.empty())
    throw UsageError(fmt::format("--families {}: name a kernel family beside cublas (cuBLAS is measured at the sizes "
                                 "the families are tuned at; families: {})",
                                 list, familyChoices()));
  return out;
}

// --params NAME=V/V/...,...: each parameter's values replace its default domain in every chosen
// family that has it (a name none of them has is a usage error). The copies live in `store`.
std::vector<const Family*> withParams(const std::vector<const Family*>& families, const std::string& params,
                                      std::deque<Family>& store) {
  if (params.empty()) return families;
  std::vector<std::string> items;
  for (size_t start = 0; start <= params.size();) {
    const size_t comma = params.find(',', start);
    std::string item = params.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!item.empty()) items.push_back(std::move(item));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  std::vector<bool> used(items.size(), false);
  std::vector<const Family*> out;
  for (const Family* f : families) {
    std::string mine;
    for (size_t i = 0; i < items.size(); ++i) {
      std::string name = items[i].substr(0, items[i].find('='));
      for (auto& ch : name) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      if (f->paramIndex(name) < 0) continue;
      used[i] = true;
      mine += (mine.empty() ? "" : ",") + items[i];
    }
    if (mine.empty()) {
      out.push_back(f);
      continue;
    }
    store.push_back(withDomains(*f, parseParamDomains(*f, mine)));
    out.push_back(&store.back());
  }
  for (size_t i = 0; i < items.size(); ++i)
    if (!used[i]) {
      std::string names;
      for (const Family* f : families) names += (names.empty() ? "" : ", ") + f->name;
      throw UsageError(fmt::format("--params {}: no chosen family has this parameter (families: {}; `gemmtune space "
                                   "--family NAME` lists each one's parameters)",
                                   quoteInput(items[i]), names));
    }
  return out;
}

// The problems to tune: --mnk or --sizes, each in every --layouts with --batch products per call;
// or --shapes, whose lines name their own layout and batch.
std::vector<GemmShape> sizesOf(const TuneArgs& a) {
  if (!a.shapes.empty()) {
    // A workload: its problems are tuned like --sizes (weights are for reporting what matters).
    std::vector<GemmShape> sizes;
    for (const WorkloadShape& w : readShapeFile(a.shapes)) sizes.push_back(w.shape);
    return sizes;
  }
  const std::vector<Layout> layouts = parseLayouts(a.layouts);
  const long long batch = parseBatch(a.batch);
  if (!a.mnk.empty()) {
    // One shape on demand, e.g. one whose untuned choice (`gemmtune query --mnk`) is poor.
    const db::ProblemKey p = serving::parseProblemSize(a.mnk);
    return shapesFor({GemmShape{p.m, p.n, p.k}}, layouts, batch);
  }
  return shapesFor(parseSizes(a.sizes), layouts, batch);
}

// --shard I/N: narrows `options` to the shard's units; false when the shard has none.
bool takeShard(const std::string& spec, TuneOptions& options) {
  const ShardSpec shard = parseShard(spec);
  const std::vector<WorkUnit> all = workUnits(options.sizes, options.families);
  options.units = unitsOf(all, shard);
  std::string mine;
  for (const WorkUnit& u : *options.units) mine += fmt::format("{}{} {}", mine.empty() ? "" : ", ", u.shape.str(), u.family->name);
  spdlog::info("shard {}: {} of {} units (size × family){}{}", shard.str(), options.units->size(), all.size(),
               mine.empty() ? "" : ": ", mine);
  if (options.units->empty()) {
    spdlog::warn("shard {} has no work: the sweep has {} unit(s) of size × family for {} shards", shard.str(),
                 all.size(), shard.count);
    return false;
  }
  return true;
}

// A rehearsal without a GPU (CI tests of whole sweeps, e.g. examples/slurm): the GPU is an
// offline profile and the worker a simulator answering with computed times
// (tests/fake_worker table). Rows are keyed as on that GPU, so never use it on a real store.
// The simulated GPUs, or none when $GEMMTUNE_SIMULATED_GPU and _WORKER are not both set.
std::optional<std::vector<GpuSpec>> simulatedGpus(TuneOptions& options) {
  const char* simulatedGpu = std::getenv("GEMMTUNE_SIMULATED_GPU");
  const char* simulatedWorker = std::getenv("GEMMTUNE_SIMULATED_WORKER");
  if (!(simulatedGpu && *simulatedGpu && simulatedWorker && *simulatedWorker)) return std::nullopt;
  std::vector<std::string> argv;
  std::istringstream words(simulatedWorker);
  for (std::string w; words >> w;) argv.push_back(w);
  options.simulated = TuneOptions::SimulatedGpu{argv, 13000};
  spdlog::warn("simulated GPU {} ($GEMMTUNE_SIMULATED_GPU): times are computed, not measured", simulatedGpu);
  // "h100,h100": a rehearsal of `--gpu all` on two GPUs of that profile.
  std::vector<GpuSpec> gpus;
  std::istringstream profiles(simulatedGpu);
  for (std::string p; std::getline(profiles, p, ',');) {
    GpuSpec g = resolveGpu(p);
    g.deviceIndex = static_cast<int>(gpus.size());
    g.uuid = fmt::format("simulated-{}", gpus.size());
    gpus.push_back(g);
  }
  return gpus;
}

// The GPUs to tune on (--gpu, or the simulated ones), each checked to hold the largest problem.
std::vector<GpuSpec> gpusToTune(const std::string& selector, TuneOptions& options) {
  auto simulated = simulatedGpus(options);
  std::vector<GpuSpec> gpus = simulated ? std::move(*simulated) : resolveGpus(selector);
  for (const auto& g : gpus) {
    if (g.deviceIndex < 0 && !simulated)
      throw UsageError(fmt::format("cannot tune the offline profile '{}': tuning runs on the GPU itself "
                                   "(use --gpu auto, an index, or all; `gemmtune space --gpu {}` plans offline)",
                                   g.profile, g.profile));
    checkFits(options.sizes, g.totalMemBytes, g.name);
  }
  return gpus;
}

// Identical GPUs share one engine and split its candidates (their results are interchangeable);
// different ones are tuned side by side, each by its own engine.
std::vector<std::vector<GpuSpec>> groupIdentical(const std::vector<GpuSpec>& gpus) {
  std::vector<std::vector<GpuSpec>> groups;
  for (auto& g : gpus) {
    auto same = std::find_if(groups.begin(), groups.end(), [&](const std::vector<GpuSpec>& group) {
      return db::gpuFingerprint(group.front()) == db::gpuFingerprint(g);
    });
    if (same == groups.end()) groups.push_back({g});
    else same->push_back(g);
  }
  return groups;
}

// One engine per group, each in its own thread when there are several. One compiler serves them all.
std::vector<GpuOutcome> tuneGroups(const std::vector<std::vector<GpuSpec>>& groups, const std::string& store,
                                   const TuneOptions& options, const CliContext& ctx) {
  Compiler compiler(ctx.compilerOptions());
  ProgressLine progress(spdlog::get_level() <= spdlog::level::info);
  std::vector<GpuOutcome> outcomes(groups.size());
  std::vector<std::exception_ptr> errors(groups.size());
  auto tuneOne = [&](size_t i) {
    try {
      auto db = db::openStore(store, {db::OpenMode::ReadWrite});
      TuningEngine engine(groups[i], compiler, *db, options, progress, gStop);
      outcomes[i] = engine.run();
    } catch (...) {
      errors[i] = std::current_exception();
      gStop = true;  // one GPU failing stops the others cleanly
    }
  };
  if (groups.size() == 1) {
    tuneOne(0);
  } else {
    std::vector<std::thread> threads;
    for (size_t i = 0; i < groups.size(); ++i) threads.emplace_back(tuneOne, i);
    for (auto& t : threads) t.join();
  }
  progress.clear();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  return outcomes;
}

// --seen: the shapes the library recorded for these GPUs (`gemmtune seen`), all of them (the engine
// orders sizes its own way; their recorded time is logged as their weight); false when there are none.
bool takeSeenShapes(const std::string& store, const std::vector<GpuSpec>& gpus, TuneOptions& options) {
  std::vector<WorkloadShape> workload;
  if (db::storeMayExist(store)) workload = seenWorkload(*db::openStore(store, {db::OpenMode::ReadOnly}), gpus);
  if (workload.empty()) {
    spdlog::warn("no shapes recorded for this GPU in {}: the library records the shapes sgemm() serves without a "
                 "tuned row (`gemmtune seen` lists them)",
                 db::maskLocation(store));
    return false;
  }
  std::string listed;
  for (const WorkloadShape& w : workload) {
    options.sizes.push_back(w.shape);
    if (listed.size() < 200) listed += fmt::format("{}{} ({:.3g} ms)", listed.empty() ? "" : ", ", w.shape.str(), w.weight);
  }
  spdlog::info("--seen: {} recorded shape(s), by recorded time: {}{}", workload.size(), listed,
               listed.size() < 200 ? "" : ", ...");
  for (const auto& g : gpus) checkFits(options.sizes, g.totalMemBytes, g.name);
  return true;
}

int run(const TuneArgs& a, const CliContext& ctx) {
  if (a.fresh && a.resume) throw UsageError("--fresh and --resume contradict each other");
  // CLI11's PositiveNumber lets nan and inf through (every comparison with nan is false).
  if (!std::isfinite(a.budget)) throw UsageError("--budget must be a finite number of seconds");
  // Everything the user typed is checked before any GPU work.
  TuneOptions options;
  if (!a.seen) options.sizes = sizesOf(a);
  std::deque<Family> narrowed;  // --params: families with some domains replaced (outlive the run)
  options.families = withParams(parseFamilies(a.families, options.cublasRows, precisionOption(a.precision)), a.params, narrowed);
  if (!a.seen && !a.shard.empty() && !takeShard(a.shard, options)) return kExitOk;
  options.resume = !a.fresh;
  options.budgetSec = a.budget;
  options.carry = a.carry;
  options.strategy = a.strategy;
  makeStrategy(a.strategy, {});  // an unknown name is a usage error before any GPU work
  options.filter.prune = a.prune;
  // The basis completes the main job's square sizes with the regimes a program meets; a workload
  // (--shapes), one shape (--mnk) or a shard of a sweep is tuned as asked, nothing added.
  options.basis = !a.noBasis && a.shapes.empty() && a.mnk.empty() && a.shard.empty() && !a.seen;
  options.selfExe = "/proc/self/exe";  // the worker is this very binary
  options.commandLine = ctx.commandLine;
  auto dbPath = db::resolveDatabasePath(a.db);

  const std::vector<GpuSpec> gpus = gpusToTune(a.gpu, options);
  const std::string store = dbPath.string();
  db::openStore(store, {db::OpenMode::ReadWrite});  // a bad store fails now, not mid-run
  if (a.seen && (!takeSeenShapes(store, gpus, options) || (!a.shard.empty() && !takeShard(a.shard, options))))
    return kExitOk;

  std::signal(SIGINT, onSignal);
  std::signal(SIGTERM, onSignal);

  const std::vector<GpuOutcome> outcomes = tuneGroups(groupIdentical(gpus), store, options, ctx);
  if (a.json) fmt::print("{}\n", tuneJson(outcomes).dump(2));
  else fmt::print("{}", formatTuneTable(outcomes));
  if (gSignal) {
    spdlog::warn("interrupted: everything measured so far is saved; run the same command again to resume");
    return 128 + gSignal;
  }
  return kExitOk;
}

// What to tune: --sizes, or --shapes, --mnk or --seen instead, with --layouts and --batch.
void addProblemOptions(CLI::App* sub, TuneArgs& args) {
  TuneArgs* a = &args;
  auto* sizes = sub->add_option("--sizes", a->sizes,
                                "Sizes: 1024..8192 (powers of two), 1024..8192:1024, 1000,1536, 4096x1024x512, 4096x1..4096x4096 (a range per dimension)")
                    ->capture_default_str();
  auto* shapes = sub->add_option("--shapes", a->shapes,
                                 "A workload file: per line MxNxK, then optionally a layout, batch=N and a weight, e.g. "
                                 "`512 nt batch=64 3`; # comments (instead of --sizes)")
                     ->excludes(sizes);
  sub->add_option("--mnk", a->mnk, "One problem MxNxK, e.g. one `query --mnk` answers poorly (instead of --sizes)")
      ->type_name("MxNxK")
      ->excludes(sizes)
      ->excludes(shapes);
  auto* seen = sub->add_flag("--seen", a->seen,
                             "Tune every shape the library served this GPU without a tuned row (`gemmtune seen` "
                             "lists them with their recorded time, their weight) (instead of --sizes)")
                   ->excludes(sizes)
                   ->excludes(shapes)
                   ->excludes("--mnk");
  sub->add_option("--layouts", a->layouts,
                  "Layouts to tune every size in: nn, nt, tn, tt, comma-separated (op(A) then op(B); t: stored "
                  "transposed, e.g. tn reads A as K rows of M)")
      ->capture_default_str()
      ->excludes(shapes)
      ->excludes(seen);
  sub->add_option("--batch", a->batch, "Independent products per call (strided batch) at every size")
      ->type_name("N")
      ->capture_default_str()
      ->excludes(shapes)
      ->excludes(seen);
}

}  // namespace

Action addTuneCommand(CLI::App& app, CliContext& ctx) {
  auto a = std::make_shared<TuneArgs>();
  auto* sub = app.add_subcommand("tune", "Tune kernel families on the GPU for the given sizes and store the results");
  sub->add_option("--gpu", a->gpu, "auto (current GPU), an index, or all")->capture_default_str();
  addProblemOptions(sub, *a);
  sub->add_option("--families", a->families,
                  "Comma-separated families (default: all of --precision's class and below: " + familyChoices() +
                      ", cublas); cublas: cuBLAS as a candidate, verified and stored as a row of its own");
  sub->add_option("--precision", a->precision,
                  "strict (default): FP32 FMA families only; faithful: also the families that compute on tensor "
                  "cores at FP32 accuracy (tf32x3, fp16x3, wgmmafp16x3 on Hopper)")
      ->check(CLI::IsMember(precisionNames(), CLI::ignore_case));
  sub->add_option("--params", a->params,
                  "Search these values instead of a parameter's default domain, in every chosen family that has it: "
                  "NAME=V/V/...,NAME=V (e.g. SWIZZLE=1/2/4/8,STAGES=3; `gemmtune space --family F` lists parameters)");
  addDbOption(sub, a->db);
  sub->add_option("--budget", a->budget, "GPU seconds per size before the rest is pruned:budget (default: none)")
      ->check(CLI::PositiveNumber);
  std::string names;
  for (const auto& n : strategyNames()) names += (names.empty() ? "" : ", ") + n;
  sub->add_option("--strategy", a->strategy,
                  "Search strategy (" + names + "): model times everything at the first size, then at each "
                  "larger one the candidates in the order of their time predicted from the smaller size "
                  "(waves of blocks over the SMs), at least --carry of them and on while they stay competitive "
                  "(at M or N <= 64 thin's small tiles first, on top); "
                  "exhaustive times everything; random draws --carry per size")
      ->capture_default_str();
  sub->add_option("--carry", a->carry,
                  "Candidates per family timed at each larger size at least (model) or drawn (random); "
                  "the rest become pruned:rank with their predicted rank (0: time all)")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  sub->add_option("--shard", a->shard,
                  "I/N: tune only shard I (from 0) of N of the sweep's size × family units, e.g. "
                  "$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT (shards never overlap; together they cover the sweep)");
  sub->add_flag("--no-basis", a->noBasis,
                "Skip the basis: after the sizes, each family's finalists are timed on eleven built-in shapes "
                "(skinny M and N, tiny M and N, GEMV, small K, long K with few tiles, ragged) in every --layouts, within 12 % of the run's "
                "time, so that shapes nobody tuned are chosen from measurements (not run with --shapes, --mnk, --seen, "
                "--shard)");
  sub->add_flag("--prune", a->prune, "Also skip configurations whose grid underfills the GPU (pruned:underfill)");
  sub->add_flag("--resume", a->resume, "Skip candidates already measured with the same cache key (default)");
  sub->add_flag("--fresh", a->fresh, "Measure everything again, ignoring stored results");
  sub->add_flag("--json", a->json, "Print the summary as JSON");
  sub->footer(fmt::format(
      "Every candidate ends with one status: ok, rejected:<limit>, compile_error, launch_error,\n"
      "runtime_fault:<code>, timeout, worker_died, wrong_result or pruned:<rule> (pruned:superseded: a\n"
      "cuBLASLt configuration a --fresh search replaced); only ok can be best.\n"
      "Ctrl-C stops after the candidate in flight; everything measured is kept and the same command resumes.\n\n"
      "Examples:\n"
      "  gemmtune tune --gpu auto --sizes 1024..8192   (then the basis shapes: --no-basis skips them)\n"
      "  gemmtune tune --sizes 1000,4096x1024x512 --families {} --json\n"
      "  gemmtune tune --gpu all --sizes 2048 --fresh --strategy exhaustive\n"
      "  gemmtune tune --sizes 1024..8192 --layouts nn,nt,tn,tt\n"
      "  gemmtune tune --sizes 512,128x128x64 --layouts nn,nt --batch 64\n"
      "  gemmtune tune --shapes workload.txt   (lines like `4096x1024x512  12` or `512 nt batch=64  3`)\n"
      "  gemmtune tune --mnk 2429x22x4103      (one shape, added to the database)\n"
      "  gemmtune tune --seen                  (the shapes your program ran untuned: `gemmtune seen`)\n"
      "  gemmtune tune --sizes 4096 --families cutlass --params SWIZZLE=1/2/4/8   (a wider domain)\n"
      "  gemmtune tune --sizes 1024..8192 --precision faithful --families tf32x3,cublas   (tensor cores, FP32 accuracy)",
      exampleFamily()));
  return [a, &ctx] { return run(*a, ctx); };
}

}  // namespace gemmtune::cli
