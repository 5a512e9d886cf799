// `gemmtune query`: the best tuned configuration for a GPU and a problem size, with its measured
// speed, how close the match is, and how to look at its code.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "FamilyHelp.hpp"
#include "PresentEnvironment.hpp"
#include "CliContext.hpp"
#include "DbPath.hpp"
#include "FamilyRegistry.hpp"
#include "GpuSelect.hpp"
#include "Lookup.hpp"
#include "ExitCodes.hpp"

namespace gemmtune::cli {

namespace {

struct QueryArgs {
  std::string db, gpu = "auto", size, mnk, family, layout = "nn", precision = "strict";
  long long batch = 1;
  bool json = false, kernelsOnly = false;
};

int noResults(const std::string& location, const std::string& what) {
  fmt::print(stderr, "gemmtune: {} in {}; run `gemmtune tune` first\n", what, db::maskLocation(location));
  return kExitFailure;
}

// The command that tunes exactly `shape`: its sizes, layout and batch (and the tensor-core class
// when the family asked for is one: `tune` leaves those out by default).
std::string tuneCommandFor(const GemmShape& shape, const std::string& family) {
  std::string out = shape.M == shape.N && shape.N == shape.K
                        ? fmt::format("gemmtune tune --sizes {}", shape.M)
                        : fmt::format("gemmtune tune --sizes {}x{}x{}", shape.M, shape.N, shape.K);
  if (shape.layout != Layout{}) out += " --layouts " + shape.layout.text();
  if (shape.batch != 1) out += fmt::format(" --batch {}", shape.batch);
  if (!family.empty() && FamilyRegistry::builtin().get(family).precision > PrecisionClass::strict)
    out += fmt::format(" --precision {} --families {}", precisionName(FamilyRegistry::builtin().get(family).precision),
                       family);
  return out;
}

// The text answer: one labelled line per fact.
void printChoice(const GpuSpec& gpu, const db::ProblemKey& problem, const serving::LookupResult& best,
                 const std::optional<double>& percent, const std::string& ptxCommand) {
  auto row = [](std::string_view k, const std::string& v) { fmt::print("{:<14}{}\n", k, v); };
  row("gpu", fmt::format("{} ({})", gpu.name, gpu.arch()));
  row("problem", fmt::format("{}x{}x{}{} ({}, beta {})", problem.m, problem.n, problem.k,
                             problem.batch > 1 ? fmt::format(" batch {}", problem.batch) : "", problem.layout,
                             problem.betaClass));
  row("best", best.cublas ? best.instance + " (cuBLAS)" : best.instance);
  row("precision", best.config && best.config->family->precision == PrecisionClass::faithful
                       ? "faithful (tensor cores, FP32 accuracy)"
                       : "strict (FP32 FMA)");
  if (best.quality == serving::MatchQuality::exact)
    row("match", "exact");
  else
    row("match", fmt::format("nearest_size: measured {} at {}x{}x{} (distance {:.2f}) because {}", best.measuredInstance,
                             best.measuredProblem.m, best.measuredProblem.n, best.measuredProblem.k, best.distance,
                             best.reason));
  row("measured", fmt::format("{:.1f} GFLOP/s (median {:.4f} ms)", best.gflops, best.medianMs));
  row("vs cuBLAS", percent ? fmt::format("{:.1f} % (cuBLAS {:.1f} GFLOP/s)", *percent, *best.cublasGflops)
                           : std::string("not measured"));
  row("PTX", best.cublas ? std::string("- (cuBLAS: no gemmtune kernel)") : ptxCommand);
}

int run(const QueryArgs& a, const CliContext& ctx) {
  if (a.size.empty() == a.mnk.empty()) throw UsageError("give the problem with --size N or --mnk MxNxK");
  db::ProblemKey problem = serving::parseProblemSize(a.size.empty() ? a.mnk : a.size);
  if (!Layout::parse(a.layout)) throw UsageError(fmt::format("--layout must be nn, nt, tn or tt, got {}", a.layout));
  if (a.batch < 1) throw UsageError(fmt::format("--batch must be at least 1, got {}", a.batch));
  problem.layout = a.layout;
  problem.batch = a.batch;
  // "cublas" asks for cuBLAS's row; any other name must be a kernel family (else a usage error).
  // A family above --precision's class would never be served: say what to add.
  if (!a.family.empty() && a.family != db::kCublasFamily) {
    requirePrecision(FamilyRegistry::builtin().get(a.family), precisionOption(a.precision));
  }

  const std::string path = db::resolveDatabasePath(a.db).string();
  if (!db::storeMayExist(path)) return noResults(path, "no tuning results yet (no database)");
  // Every CLI command runs quick_check on open (0.4 s at 100 000 rows), so `query` and `db check`
  // never disagree about a damaged file; only the library, where latency matters, checks the
  // header alone (docs/db-format.md).
  auto opened = db::openStore(path, {db::OpenMode::ReadOnly, db::OpenCheck::Quick});
  const db::ResultStore& store = *opened;
  if (!store.hasSchema() || store.gpus().empty()) return noResults(path, "no tuning results yet");
  serving::SelectedGpu gpu = serving::selectGpu(store, a.gpu);

  serving::LookupPolicy policy;
  policy.cublas = !a.kernelsOnly;
  policy.precision = precisionOption(a.precision);
  serving::Lookup lookup(store, serving::presentEnvironment(ctx.templatesDir.string()), policy);
  serving::LookupResult best = lookup.best(gpu.spec, problem, a.family);
  const GemmShape shape = db::shapeOf(problem);
  const std::string sizeText = shape.str();
  std::optional<double> percent;
  if (best.cublasGflops && *best.cublasGflops > 0) percent = 100.0 * best.gflops / *best.cublasGflops;
  const bool found = best.config || best.cublas;
  std::string ptxCommand = best.config ? fmt::format("gemmtune ptx {} --arch {} --stats", best.instance, gpu.spec.arch()) : "";

  if (a.json) {
    auto problemJson = [](const db::ProblemKey& p) {
      return nlohmann::json{{"m", p.m}, {"n", p.n}, {"k", p.k}, {"layout", p.layout}, {"beta_class", p.betaClass}, {"batch", p.batch}};
    };
    nlohmann::json j = {{"gpu", gpu.spec.name}, {"fingerprint", gpu.fingerprint}, {"problem", problemJson(problem)},
                        {"family", a.family.empty() ? nlohmann::json() : nlohmann::json(a.family)},
                        {"match", serving::toString(best.quality)}};
    if (found) {
      j.update({{"instance", best.instance}, {"cublas", best.cublas}, {"measured_instance", best.measuredInstance},
                {"measured_problem", problemJson(best.measuredProblem)}, {"distance", best.distance},
                {"precision", best.config ? precisionName(best.config->family->precision) : "strict"},
                {"gflops", best.gflops}, {"median_ms", best.medianMs},
                {"predicted_ms", best.quality == serving::MatchQuality::exact ? nlohmann::json() : nlohmann::json(best.predictedMs)},
                {"reason", best.reason},
                {"cublas_gflops", best.cublasGflops ? nlohmann::json(*best.cublasGflops) : nlohmann::json()},
                {"percent_of_cublas", percent ? nlohmann::json(*percent) : nlohmann::json()},
                {"threads_per_block",
                 best.config ? nlohmann::json(best.config->family->threadsPerBlock(*best.config)) : nlohmann::json()},
                {"dynamic_smem_bytes",
                 best.config ? nlohmann::json(best.config->family->dynamicSmemBytes(*best.config)) : nlohmann::json()},
                {"ptx_command", ptxCommand}});
    }
    fmt::print("{}\n", j.dump(2));
  }
  if (!found) {
    const bool faithfulFamily =
        !a.family.empty() && FamilyRegistry::builtin().get(a.family).precision > PrecisionClass::strict;
    fmt::print(stderr, "gemmtune: no valid tuned configuration for {} at {}{} in {}{}; run `{}` first\n", gpu.spec.name,
               sizeText, a.family.empty() ? "" : " in family " + a.family, store.location(),
               faithfulFamily ? " (a tensor-core row serves only the exact problem it was tuned on)" : "",
               tuneCommandFor(shape, a.family));
    return kExitFailure;
  }
  if (a.json) return kExitOk;

  printChoice(gpu.spec, problem, best, percent, ptxCommand);
  return kExitOk;
}

}  // namespace

Action addQueryCommand(CLI::App& app, CliContext& ctx) {
  auto a = std::make_shared<QueryArgs>();
  auto* sub = app.add_subcommand("query", "Show the best tuned configuration for a GPU and problem size");
  addDbOption(sub, a->db);
  sub->add_option("--gpu", a->gpu, "auto (the GPU here), an index of a GPU here (e.g. 1), or a GPU stored in the database: profile, name or part of it")
      ->capture_default_str();
  sub->add_option("--size", a->size, "Square problem M = N = K, or MxNxK")->check(nonEmpty)->type_name("N");
  sub->add_option("--mnk", a->mnk, "Problem size MxNxK, e.g. 4096x2048x1024")->check(nonEmpty)->type_name("MxNxK");
  sub->add_option("--layout", a->layout, "How A and B are stored: nn (default), nt, tn or tt (op(A), op(B); row-major)")
      ->type_name("OPS");
  sub->add_option("--batch", a->batch, "Products per call (strided or pointer-array batched), default 1")->type_name("N");
  sub->add_option("--family", a->family, "Only this kernel family (" + familyChoices() + "), or cublas: cuBLAS's row");
  sub->add_option("--precision", a->precision,
                  "The most the answer may use: strict (default, FP32 FMA kernels only, as Library::Options) or "
                  "faithful (also tensor-core kernels at FP32 accuracy)")
      ->check(CLI::IsMember(precisionNames(), CLI::ignore_case));
  sub->add_flag("--kernels-only", a->kernelsOnly,
                "gemmtune's kernels only: cuBLAS is no candidate (as for Library::Options::cublas = false)");
  sub->add_flag("--json", a->json, "Machine-readable output");
  sub->footer(fmt::format(
      "Match quality: exact (measured at this size), nearest_size (the closest measured size by\n"
      "|log2 MN/M'N'| + 1/2 |log2 K/K'| + 1/4 |log2 (M/N)/(M'/N')|: output area first, in its guarded\n"
      "form when the tiles do not divide),\n"
      "or none (exit 1). Stale rows (other NVRTC, driver, template source) and rows claiming more\n"
      "than 1.1 x the GPU's FP32 peak are never used.\n\n"
      "Examples:\n"
      "  gemmtune query --size 4096\n"
      "  gemmtune query --gpu h100 --mnk 4096x2048x1024 --family {} --json\n"
      "  gemmtune query --db results/tune.db --gpu \"RTX A6000\" --size 1024",
      exampleFamily()));
  return [a, &ctx] { return run(*a, ctx); };
}

}  // namespace gemmtune::cli
