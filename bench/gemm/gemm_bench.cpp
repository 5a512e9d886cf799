// gemm_bench: tuned kernels side by side with cuBLAS and the classic fixed configurations, in one
// process on one GPU. Per size: cuBLAS (default math, no TF32), each family's classic fixed
// configuration, each family's tuned best from the results database, and gemmtune::Library::
// sgemm() (dispatch included). Every column is verified first (the tuner's three checks), then
// timed with CUDA events in interleaved rounds over rotating inputs that exceed L2; the table
// shows the median TFLOP/s and speed ratios measured in this run. Then: sgemm() dispatch
// overhead over a raw launch, and best() query latency.
//
// Run: build/bench/gemm_bench [--db PATH] [--sizes SPEC] [--csv FILE]
//      (after `gemmtune tune --gpu auto --sizes 1024..8192`; scripts/gpu-check.sh tune bench)
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
#include "worker/Cublas.hpp"
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

SizeResult benchSize(const GemmShape& s, const Options& o, const GpuContext& gpu, const HelperKernels& helpers,
                     const Cublas& blas, ContenderFactory& factory) {
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
    try {
      Verdict v = verify(data, gpu, helpers, c.launch);
      m.verified = v.ok;
      m.verifyDetail = v.detail;
    } catch (const std::exception& e) {
      m.verifyDetail = e.what();
    }
    result.rows.push_back(std::move(m));
  }

  // cuBLAS first with a long warm-up: an idle GPU needs a moment to reach its boost clock.
  TimingPolicy warm;
  warm.warmupMs = 300;
  warm.budgetMs = 50;
  timeLaunches(warm, gpu.stream(), [&](int rep) { contenders[0].launch(data.timingArgs(rep)); });

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
      auto t = timeLaunches(policy, gpu.stream(), [&](int rep) { contenders[i].launch(data.timingArgs(rep)); });
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

int run(const Options& o) {
  const ColumnSet columns = parseColumns(o.columns);
  std::vector<WorkloadShape> workload;
  if (!o.shapes.empty()) workload = readShapeFile(o.shapes);
  std::vector<GemmShape> sizes;
  if (workload.empty()) {
    const long long batch = o.batch;
    for (const GemmShape& size : parseSizes(o.sizes))
      for (const Layout& layout : parseLayouts(o.layouts)) sizes.push_back({size.M, size.N, size.K, layout, batch});
  } else
    for (const auto& w : workload) sizes.push_back(w.shape);
  const std::filesystem::path dbPath = db::resolveDatabasePath(o.db);
  const GpuSpec spec = queryGpu(o.gpu);
  checkFits(sizes, spec.totalMemBytes, spec.name);

  GpuContext gpu(o.gpu);
  const WorkerInfo info = gpu.info();
  HelperKernels helpers(info.arch, gpu.stream(), info.smCount);
  Cublas blas(gpu.stream());
  Compiler compiler;

  std::unique_ptr<db::ResultStore> database;
  std::optional<serving::Lookup> lookup;
  if (db::storeMayExist(dbPath.string())) {
    database = db::openStore(dbPath.string(), db::OpenOptions{db::OpenMode::ReadOnly, db::OpenCheck::Quick});
    lookup.emplace(*database, serving::presentEnvironment());
  } else {
    fmt::print(stderr, "no results database at {}: tuned columns left out (run `gemmtune tune` first)\n",
               dbPath.string());
  }
  std::unique_ptr<LibraryColumn> library, ours;
  if (LibraryColumn::built()) {
    library = std::make_unique<LibraryColumn>(dbPath, true);
    // Also the dispatch-overhead figure's: it compares sgemm() with the raw launch of the kernel
    // the library runs, which must be a gemmtune kernel.
    ours = std::make_unique<LibraryColumn>(dbPath, false);
  } else
    fmt::print(stderr, "built without gemmtune::Library: the sgemm() column and dispatch figures are left out\n");

  fmt::print("{} ({}, {} SMs), driver {}, {}, database {}\n", info.name, info.arch, info.smCount, info.driverVersion,
             blas.library(), dbPath.string());
  ContenderFactory factory(gpu.stream(), o.gpu, spec, blas, compiler, lookup ? &*lookup : nullptr, library.get(),
                          columns.ours ? ours.get() : nullptr, columns);
  std::vector<SizeResult> results;
  for (const auto& s : sizes) {
    results.push_back(benchSize(s, o, gpu, helpers, blas, factory));
    fmt::print(stderr, "{} done\n", s.str());
  }
  fmt::print("{}", formatTable(info.name, results));
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
  bool allVerified = true;
  for (const auto& r : results)
    for (const auto& m : r.rows) allVerified = allVerified && m.verified;
  return allVerified ? kExitOk : kExitFailure;
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
  app.add_option("--csv", o.csv, "Also write every row as CSV to this file");
  app.add_option("--gpu", o.gpu, "CUDA ordinal")->capture_default_str();
  app.add_option("--rounds", o.rounds, "Interleaved timing rounds per column (median taken)")
      ->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--budget-ms", o.budgetMs, "Timed GPU milliseconds per column and round")
      ->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--dispatch-size", o.dispatchSize, "M = N = K of the dispatch-overhead measurement")
      ->check(CLI::PositiveNumber)->capture_default_str();
  app.footer("Exit: 0 ok, 1 a column failed verification, 2 usage, 69 no GPU/driver.");
  CLI11_PARSE(app, argc, argv);
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
