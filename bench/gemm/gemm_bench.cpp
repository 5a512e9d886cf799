// gemm_bench: tuned kernels side by side with cuBLAS and the classic fixed configurations, in one
// process on one GPU. Per size: cuBLAS (default math, no TF32), each family's classic fixed
// configuration, each family's tuned best from the results database, and gemmtune::Library::
// sgemm(). Every column is verified first (the tuner's three checks), then timed with CUDA events
// as the tuner times (the GPU's time alone: a column's host work, sgemm()'s dispatch included, is
// not in it; the dispatch is measured apart, below) in interleaved rounds over rotating inputs
// that exceed L2; the table shows the median TFLOP/s and speed ratios measured in this run. Then: sgemm() dispatch
// overhead over a raw launch, and best() query latency.
//
// --precision (issue 29) is the most a column may run, as for Library::Options::precision:
// strict (default) shows only FP32 FMA families, what a caller who allowed nothing more gets;
// faithful adds the tensor-core families at FP32 accuracy (tf32x3, fp16x3, wgmmafp16x3) and, since their speed is only
// half the story, a second table per size: every verified column's error against an FP64 product
// on three data sets beside cuBLAS SGEMM's (worker/FaithfulCheck.hpp). A faithful-class column
// above cuBLAS's error is timed but flagged, and fails the run like a wrong result.
//
// Run: build/bench/gemm_bench [--db PATH] [--sizes SPEC] [--precision strict|faithful] [--csv FILE]
//      e.g. build/bench/gemm_bench --precision faithful --sizes 1024..8192
//      (after `gemmtune tune --gpu auto --sizes 1024..8192`, with `--precision faithful` for the
//      tf32x3 columns; scripts/gpu-check.sh tune bench)
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <optional>

#include "PresentEnvironment.hpp"
#include "BenchReport.hpp"
#include "Compiler.hpp"
#include "Contenders.hpp"
#include "CudaDriver.hpp"
#include "ResultStore.hpp"
#include "DbPath.hpp"
#include "GpuDetect.hpp"
#include "Latency.hpp"
#include "LibraryColumn.hpp"
#include "ShapeFile.hpp"
#include "WorkloadSummary.hpp"
#include "Lookup.hpp"
#include "ExitCodes.hpp"
#include "gemmtune/Precision.hpp"
#include "worker/AccuracyKernels.hpp"
#include "worker/Cublas.hpp"
#include "worker/FaithfulCheck.hpp"
#include "worker/GpuContext.hpp"
#include "worker/HelperKernels.hpp"
#include "worker/ProblemData.hpp"
#include "worker/Timer.hpp"
#include "worker/Verifier.hpp"

using namespace gemmtune;
using namespace gemmtune::bench;

namespace {

struct Options {
  std::string db, sizes = "1024,2048,4096,8192,1000,4000,4096x1024x512", shapes, csv, layouts = "nn";
  std::string columns = "cublas,fixed,tuned,library";
  std::string precisionText = "strict";
  PrecisionClass precision = PrecisionClass::strict;  // precisionText, once parsed
  long long batch = 1;
  int gpu = 0;
  int rounds = 5;
  double budgetMs = 100;
  long long dispatchSize = 64;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Every verified column's error figures at `s` (faithful runs). The data sets live only while
// judging, so the timing that follows runs with the memory it had before.
void judgeFaithful(const GemmShape& s, const GpuContext& gpu, const HelperKernels& helpers,
                   const AccuracyKernels& accuracy, const Cublas& blas, const std::vector<Contender>& contenders,
                   SizeResult& result) {
  std::optional<FaithfulData> data;
  try {
    data.emplace(Problem::of(s), gpu, helpers, accuracy, blas);
  } catch (const std::exception& e) {
    fmt::print(stderr, "error figures at {} left out: {}\n", s.str(), e.what());
    return;
  }
  for (std::size_t i = 0; i < contenders.size(); ++i) {
    Measured& m = result.rows[i];
    if (!m.verified) continue;
    try {
      m.faithful = data->judge(contenders[i].launch);
    } catch (const std::exception& e) {
      m.faithful = FaithfulVerdict{false, {}, e.what()};
    }
    if (!m.faithful->ok) fmt::print(stderr, "{} at {}: not within cuBLAS's error: {}\n", m.column, s.str(), m.faithful->detail);
  }
}

SizeResult benchSize(const GemmShape& s, const Options& o, const GpuContext& gpu, const HelperKernels& helpers,
                     LaunchGate& gate, const Cublas& blas, ContenderFactory& factory, const AccuracyKernels* accuracy) {
  ProblemData data(Problem::of(s), gpu, helpers, blas);
  std::vector<Contender> contenders = factory.forSize(s);
  SizeResult result{s, {}};
  for (const auto& c : contenders) {
    Measured m;
    m.kind = c.kind;
    m.column = c.column;
    m.family = c.family;
    m.instance = c.instance;
    m.match = c.match;
    m.precision = c.precision;
    try {
      Verdict v = verify(data, gpu, helpers, c.launch);
      m.verified = v.ok;
      m.verifyDetail = v.detail;
    } catch (const std::exception& e) {
      m.verifyDetail = e.what();
    }
    result.rows.push_back(std::move(m));
  }
  if (accuracy) judgeFaithful(s, gpu, helpers, *accuracy, blas, contenders, result);

  // cuBLAS first with a long warm-up: an idle GPU needs a moment to reach its boost clock.
  TimingPolicy warm;
  warm.warmupMs = 300;
  warm.budgetMs = 50;
  timeLaunches(warm, gpu.stream(), gate, [&](int rep) { contenders[0].launch(data.timingArgs(rep)); });

  TimingPolicy policy;
  policy.warmupMs = 10;
  policy.budgetMs = o.budgetMs;
  policy.minReps = 3;
  policy.maxReps = 200;
  policy.spreadTarget = 0.01;
  std::vector<std::vector<double>> samples(contenders.size());
  for (int round = 0; round < o.rounds; ++round)
    for (size_t i = 0; i < contenders.size(); ++i) {
      if (!result.rows[i].verified) continue;  // a wrong kernel is never timed
      auto t = timeLaunches(policy, gpu.stream(), gate, [&](int rep) { contenders[i].launch(data.timingArgs(rep)); });
      samples[i].push_back(t.summary.medianMs);
    }
  for (size_t i = 0; i < contenders.size(); ++i) {
    if (samples[i].empty()) continue;
    auto& m = result.rows[i];
    m.medianMs = median(samples[i]);
    auto [lo, hi] = std::minmax_element(samples[i].begin(), samples[i].end());
    m.spread = (*hi - *lo) / m.medianMs;
  }
  return result;
}

// The workload's shapes, else every --sizes item in every --layouts at --batch.
std::vector<GemmShape> problemsToBench(const Options& o, const std::vector<WorkloadShape>& workload) {
  std::vector<GemmShape> sizes;
  if (!workload.empty()) {
    for (const auto& w : workload) sizes.push_back(w.shape);
    return sizes;
  }
  for (const GemmShape& size : parseSizes(o.sizes))
    for (const Layout& layout : parseLayouts(o.layouts)) sizes.push_back({size.M, size.N, size.K, layout, o.batch});
  return sizes;
}

int run(const Options& o) {
  ColumnSet columns = parseColumns(o.columns);
  columns.precision = o.precision;
  std::vector<WorkloadShape> workload;
  if (!o.shapes.empty()) workload = readShapeFile(o.shapes);
  const std::vector<GemmShape> sizes = problemsToBench(o, workload);
  const std::filesystem::path dbPath = db::resolveDatabasePath(o.db);
  const GpuSpec spec = queryGpu(o.gpu);
  checkFits(sizes, spec.totalMemBytes, spec.name);

  GpuContext gpu(o.gpu);
  const WorkerInfo info = gpu.info();
  HelperKernels helpers(info.arch, gpu.stream(), info.smCount);
  LaunchGate gate(helpers);  // every column's samples: the GPU's time alone
  Cublas blas(gpu.stream());
  Compiler compiler;
  // Compiled only for a faithful run: a strict one shows no error figures and pays nothing.
  std::optional<AccuracyKernels> accuracy;
  if (o.precision == PrecisionClass::faithful) accuracy.emplace(info.arch, gpu.stream(), info.smCount);

  std::unique_ptr<db::ResultStore> database;
  std::optional<serving::Lookup> lookup;
  if (db::storeMayExist(dbPath.string())) {
    database = db::openStore(dbPath.string(), db::OpenOptions{db::OpenMode::ReadOnly, db::OpenCheck::Quick});
    serving::LookupPolicy policy;
    policy.precision = o.precision;  // as `gemmtune query --precision`: strict never answers a tf32x3 row
    lookup.emplace(*database, serving::presentEnvironment(), policy);
  } else {
    fmt::print(stderr, "no results database at {}: tuned columns left out (run `gemmtune tune` first)\n",
               dbPath.string());
  }
  std::unique_ptr<LibraryColumn> library, ours;
  if (LibraryColumn::built()) {
    library = std::make_unique<LibraryColumn>(dbPath, true, o.precision);
    // Also the dispatch-overhead figure's: it compares sgemm() with the raw launch of the kernel
    // the library runs, which must be a gemmtune kernel.
    ours = std::make_unique<LibraryColumn>(dbPath, false, o.precision);
  } else
    fmt::print(stderr, "built without gemmtune::Library: the sgemm() column and dispatch figures are left out\n");

  fmt::print("{} ({}, {} SMs), driver {}, {}, database {}, precision {}\n", info.name, info.arch, info.smCount,
             info.driverVersion, blas.library(), dbPath.string(), precisionName(o.precision));
  ContenderFactory factory(gpu.stream(), o.gpu, spec, blas, compiler, lookup ? &*lookup : nullptr, library.get(),
                          columns.ours ? ours.get() : nullptr, columns);
  std::vector<SizeResult> results;
  for (const auto& s : sizes) {
    results.push_back(benchSize(s, o, gpu, helpers, gate, blas, factory, accuracy ? &*accuracy : nullptr));
    fmt::print(stderr, "{} done\n", s.str());
  }
  fmt::print("{}", formatTable(info.name, results, o.precision));
  fmt::print("{}", formatErrors(results));
  if (!workload.empty()) fmt::print("{}", formatWorkload(workload, results));

  std::optional<DispatchFigures> dispatch;
  std::optional<QueryFigures> query;
  if (library) {
    try {
      dispatch = measureDispatch(*ours, o.gpu, gpu.stream(), helpers, compiler, info.arch,
                                 GemmShape{o.dispatchSize, o.dispatchSize, o.dispatchSize});
    } catch (const std::exception& e) {
      fmt::print(stderr, "dispatch overhead not measured: {}\n", e.what());
    }
  }
  if (lookup) query = measureQueries(dbPath, spec, sizes.front(), library.get(), o.gpu);
  fmt::print("{}", formatLatency(dispatch, query));

  if (!o.csv.empty()) {
    writeCsv(o.csv, info.name, results);
    fmt::print(stderr, "wrote {}\n", o.csv);
  }
  bool allPassed = true;
  for (const auto& r : results)
    for (const auto& m : r.rows) allPassed = allPassed && m.verified && !failsFaithful(m);
  return allPassed ? kExitOk : kExitFailure;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"gemm_bench: tuned SGEMM vs cuBLAS vs the classic fixed configurations, on this GPU"};
  app.add_option("--db", o.db, db::kDbOptionHelp);
  auto* sizes = app.add_option("--sizes", o.sizes, "Sizes in the tune grammar: 1024..8192, 1000,4000, 4096x1024x512")
                    ->capture_default_str();
  app.add_option("--shapes", o.shapes, "A workload file as for `tune --shapes` (adds a per-shape summary)")
      ->excludes(sizes);
  app.add_option("--layouts", o.layouts, "Layouts of every --sizes item: nn, nt, tn, tt, comma-separated")
      ->capture_default_str();
  app.add_option("--batch", o.batch, "Strided-batched products per call for every --sizes item (cuBLAS column: "
                                     "cublasSgemmStridedBatched)")
      ->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--columns", o.columns,
                 "Columns to time, comma-separated: cublas (always), fixed (each family's classic configuration), "
                 "tuned (each family's best from the database), library (sgemm()), ours (sgemm() with cuBLAS "
                 "excluded as a candidate)")
      ->capture_default_str();
  app.add_option("--precision", o.precisionText,
                 "The most a column may run, as Library::Options::precision: strict (FP32 FMA kernels only) or "
                 "faithful (also tensor-core kernels at FP32 accuracy, tf32x3, fp16x3 and wgmmafp16x3; adds every column's error against "
                 "FP64 beside cuBLAS's)")
      ->capture_default_str();
  app.add_option("--csv", o.csv, "Also write every row as CSV to this file (error figures empty under strict)");
  app.add_option("--gpu", o.gpu, "CUDA ordinal")->capture_default_str();
  app.add_option("--rounds", o.rounds, "Interleaved timing rounds per column (median taken)")
      ->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--budget-ms", o.budgetMs, "Timed GPU milliseconds per column and round")
      ->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--dispatch-size", o.dispatchSize, "M = N = K of the dispatch-overhead measurement")
      ->check(CLI::PositiveNumber)->capture_default_str();
  app.footer("Exit: 0 ok, 1 a column failed verification (or, faithful, a faithful-class column's error is above "
             "cuBLAS's), 2 usage, 69 no GPU/driver.");
  CLI11_PARSE(app, argc, argv);
  // Checked here rather than by CLI11, whose validation failures exit with its own codes, not 2.
  const std::optional<PrecisionClass> precision = precisionNamed(o.precisionText);
  if (!precision) {
    fmt::print(stderr, "gemm_bench: --precision: unknown class '{}' (strict, faithful)\n", o.precisionText);
    return kExitUsage;
  }
  o.precision = *precision;
  try {
    return run(o);
  } catch (const Error& e) {
    fmt::print(stderr, "gemm_bench: {}\n", e.what());
    return exitCodeOf(e);
  } catch (const std::invalid_argument& e) {
    fmt::print(stderr, "gemm_bench: {}\n", e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    fmt::print(stderr, "gemm_bench: {}\n", e.what());
    return kExitFailure;
  }
}
