// `gemmtune results`: the measured rows — successes and failures — with their timing,
// resources, status and whether they are stale (measured under another NVRTC, driver, template
// source, method or GPU fingerprint than the present one, or filed under a family their instance
// name does not belong to: db/StaleRows.hpp, the rule `gemmtune report` applies too) or claim a
// speed their GPU cannot reach (serving/SpeedBound.hpp: `query` never serves them). cuBLAS's rows
// (family cublas, instance cublas_<layout>: cuBLAS verified and timed as a candidate) are listed
// like any other, without parameters, registers or shared memory.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "FamilyHelp.hpp"
#include "PresentEnvironment.hpp"
#include "CliContext.hpp"
#include "ClockRule.hpp"
#include "DbPath.hpp"
#include "GemmShape.hpp"
#include "GpuSelect.hpp"
#include "ResultStore.hpp"
#include "SpeedBound.hpp"
#include "StaleRows.hpp"
#include "ExitCodes.hpp"
#include "ParamsJson.hpp"
#include "Quote.hpp"

namespace gemmtune::cli {

namespace {

struct ResultsArgs {
  std::string db, gpu, size, layout, family, status;
  std::optional<long long> batch;
  bool json = false, csv = false;
};

std::string csvField(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

template <class T>
std::string orDash(const std::optional<T>& v, const char* format) {
  return v ? fmt::format(fmt::runtime(format), *v) : std::string("-");
}

struct Row {
  db::StoredResult result;
  std::vector<std::string> stale;
  std::optional<std::string> implausible;  // why it cannot have run that fast on its stored GPU
};

// The table's last column: why the row is stale, and whether its speed is implausible.
std::string lastColumn(const std::vector<std::string>& stale, bool implausible) {
  std::string out = stale.empty() ? "" : fmt::format("stale: {}", fmt::join(stale, ", "));
  if (implausible) out += out.empty() ? "implausible speed" : "; implausible speed";
  return out;
}

// The rows to list: the options as a store filter. `currentFingerprint` learns the fingerprint of
// a GPU detected here.
db::ResultFilter filterOf(const ResultsArgs& a, const db::ResultStore& store,
                          serving::CurrentFingerprints& currentFingerprint) {
  db::ResultFilter filter;
  if (!a.gpu.empty()) {
    serving::SelectedGpu gpu = serving::selectGpu(store, a.gpu);
    filter.gpuId = gpu.stored ? gpu.stored->id : -1;
    if (gpu.detected) currentFingerprint[gpu.spec.name] = gpu.fingerprint;
  }
  if (!a.size.empty()) {
    auto p = serving::parseProblemSize(a.size);
    filter.m = p.m, filter.n = p.n, filter.k = p.k;
  }
  if (!a.layout.empty()) {
    if (!Layout::parse(a.layout))
      throw UsageError(fmt::format("--layout {}: expected nn, nt, tn or tt (op(A) then op(B))", quoteInput(a.layout)));
    filter.layout = a.layout;
  }
  if (a.batch) {
    if (*a.batch < 1) throw UsageError(fmt::format("--batch {}: expected a batch count of 1 or more", *a.batch));
    filter.batch = a.batch;
  }
  if (!a.family.empty()) filter.family = a.family;
  if (!a.status.empty()) filter.status = a.status;
  return filter;
}

// What the store says about a row beyond its own columns: its GPU's spec (boost clock, speed
// bound) and the GPU that measured it.
class RowContext {
 public:
  RowContext(const db::ResultStore& store, const std::vector<db::StoredGpu>& gpus) {
    for (const auto& g : gpus) specOf_[g.fingerprint] = g.spec;
    for (const auto& run : store.runs()) {
      uuidOfRun_[run.id] = run.gpu.uuid;
      if (!run.gpu.uuid.empty()) uuidsOfModel_[run.gpuFingerprint].insert(run.gpu.uuid);
    }
  }

  // A row timed far below its GPU's boost clock is marked (the tuner re-times such timings).
  bool lowClock(const db::StoredResult& r) const {
    auto it = specOf_.find(r.key.gpuFingerprint);
    return r.smClockMHz && it != specOf_.end() &&
           belowSustainedClock(*r.smClockMHz, static_cast<int>(it->second.clockKhz / 1000));
  }
  // Why a row cannot have run as fast as it says on the GPU it was stored for (serving/SpeedBound).
  std::optional<std::string> implausible(const db::StoredResult& r, const std::optional<Config>& config) const {
    auto it = specOf_.find(r.key.gpuFingerprint);
    if (it == specOf_.end()) return std::nullopt;
    return serving::implausibleSpeed(
        r, it->second, config ? serving::precisionClassOf(*config->family) : serving::PrecisionClass::strict);
  }
  // Which GPU measured a row: its run's GPU (identical GPUs of one `tune --gpu all` share the rows
  // of their model, each row in the run of the GPU that timed it).
  std::string measuredOn(const db::StoredResult& r) const {
    auto it = uuidOfRun_.find(r.runId);
    return it == uuidOfRun_.end() ? std::string() : it->second;
  }
  // Named in the table only where one model has rows from several GPUs.
  std::string gpuColumn(const db::StoredResult& r) const {
    const std::string uuid = measuredOn(r);
    auto model = uuidsOfModel_.find(r.key.gpuFingerprint);
    if (uuid.empty() || model == uuidsOfModel_.end() || model->second.size() < 2) return r.gpuName;
    return fmt::format("{} [{}]", r.gpuName, uuid.substr(0, 12));
  }

 private:
  std::map<std::string, GpuSpec> specOf_;
  std::map<std::int64_t, std::string> uuidOfRun_;
  std::map<std::string, std::set<std::string>> uuidsOfModel_;
};

template <class T>
nlohmann::json orNull(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

void printJson(const std::vector<Row>& rows, const RowContext& context) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [r, stale, implausible] : rows) {
    out.push_back({{"id", r.id}, {"gpu", r.gpuName}, {"gpu_fingerprint", r.key.gpuFingerprint},
                   {"run", r.runUid}, {"gpu_uuid", context.measuredOn(r)}, {"family", r.family},
                   {"instance", r.instance()}, {"params", db::paramsForOutput(r.params)},
                   {"m", r.key.problem.m}, {"n", r.key.problem.n}, {"k", r.key.problem.k},
                   {"layout", r.key.problem.layout}, {"batch", r.key.problem.batch},
                   {"beta_class", r.key.problem.betaClass},
                   {"status", r.fullStatus()}, {"error_text", r.errorText},
                   {"median_ms", orNull(r.medianMs)}, {"min_ms", orNull(r.minMs)}, {"spread", orNull(r.spread)},
                   {"reps", orNull(r.reps)}, {"partial", r.partial}, {"gflops", orNull(r.gflops)},
                   {"registers", orNull(r.registers)}, {"static_smem_bytes", orNull(r.staticSmemBytes)},
                   {"dynamic_smem_bytes", orNull(r.dynamicSmemBytes)},
                   {"spill_store_bytes", orNull(r.spillStoreBytes)}, {"occupancy", orNull(r.occupancy)},
                   {"limiter", r.limiter}, {"max_error", orNull(r.maxError)},
                   {"nvrtc_version", r.key.nvrtcVersion}, {"driver_version", r.key.driverVersion},
                   {"source_hash", r.key.sourceHash}, {"measured_at", r.measuredAt},
                   {"sm_clock_mhz", orNull(r.smClockMHz)}, {"low_clock", context.lowClock(r)},
                   {"stale", !stale.empty()}, {"stale_reasons", stale},
                   {"implausible", orNull(implausible)}});
  }
  fmt::print("{}\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
}

void printCsv(const std::vector<Row>& rows, const RowContext& context) {
  fmt::print("gpu,m,n,k,layout,batch,beta_class,instance,status,gflops,median_ms,min_ms,spread,reps,registers,"
             "static_smem_bytes,dynamic_smem_bytes,spill_store_bytes,occupancy,limiter,measured_at,stale,"
             "sm_clock_mhz,low_clock,gpu_uuid,implausible\n");
  for (const auto& [r, stale, implausible] : rows)
    fmt::print("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", csvField(r.gpuName),
               r.key.problem.m, r.key.problem.n, r.key.problem.k, csvField(r.key.problem.layout), r.key.problem.batch,
               csvField(r.key.problem.betaClass), csvField(r.instance()), csvField(r.fullStatus()),
               r.gflops ? fmt::format("{}", *r.gflops) : "", r.medianMs ? fmt::format("{}", *r.medianMs) : "",
               r.minMs ? fmt::format("{}", *r.minMs) : "", r.spread ? fmt::format("{}", *r.spread) : "",
               r.reps ? std::to_string(*r.reps) : "", r.registers ? std::to_string(*r.registers) : "",
               r.staticSmemBytes ? std::to_string(*r.staticSmemBytes) : "",
               r.dynamicSmemBytes ? std::to_string(*r.dynamicSmemBytes) : "",
               r.spillStoreBytes ? std::to_string(*r.spillStoreBytes) : "",
               r.occupancy ? fmt::format("{}", *r.occupancy) : "", csvField(r.limiter), r.measuredAt,
               csvField(fmt::format("{}", fmt::join(stale, "; "))), r.smClockMHz ? std::to_string(*r.smClockMHz) : "",
               context.lowClock(r) ? 1 : 0, csvField(context.measuredOn(r)), implausible ? 1 : 0);
}

// "4096x4096x4096", then " tn" for a layout other than nn and " batch 64" for a batch.
std::string problemColumn(const db::ProblemKey& p) {
  return fmt::format("{}x{}x{}{}", p.m, p.n, p.k, db::layoutAndBatchSuffix(p));
}

void printTable(const std::vector<Row>& rows, const RowContext& context) {
  std::size_t sizeWidth = 16;  // wider only for rows whose layout or batch makes a longer label
  for (const auto& row : rows) sizeWidth = std::max(sizeWidth, problemColumn(row.result.key.problem).size());
  fmt::print("{:<{}} {:<40} {:<22} {:>10} {:>10} {:>5} {:>7} {:>5} {:>8}  {:<20} {}\n", "size", sizeWidth,
             "instance", "status", "GFLOP/s", "median ms", "regs", "smem B", "occ", "SM MHz", "gpu",
             "stale or implausible");
  for (const auto& [r, stale, implausible] : rows) {
    std::string smem = r.staticSmemBytes || r.dynamicSmemBytes
                           ? std::to_string(r.staticSmemBytes.value_or(0) + r.dynamicSmemBytes.value_or(0))
                           : "-";
    fmt::print("{:<{}} {:<40} {:<22} {:>10} {:>10} {:>5} {:>7} {:>5} {:>8}  {:<20} {}\n",
               problemColumn(r.key.problem), sizeWidth, r.instance(),
               r.fullStatus(), orDash(r.gflops, "{:.1f}"), orDash(r.medianMs, "{:.4f}"), orDash(r.registers, "{}"),
               smem, r.occupancy ? fmt::format("{:.0f}%", *r.occupancy * 100) : "-",
               orDash(r.smClockMHz, "{}") + (context.lowClock(r) ? " low" : ""), context.gpuColumn(r),
               lastColumn(stale, implausible.has_value()));
  }
}

int run(const ResultsArgs& a, const CliContext& ctx) {
  if (a.json && a.csv) throw UsageError("choose one of --json and --csv");
  const std::string location = db::resolveDatabasePath(a.db).string();
  if (!db::storeMayExist(location)) {
    fmt::print(stderr, "gemmtune: no tuning results yet in {} (no database); run `gemmtune tune` first\n", location);
    return kExitFailure;
  }
  auto opened = db::openStore(location, {db::OpenMode::ReadOnly, db::OpenCheck::Quick});
  const db::ResultStore& store = *opened;
  const std::string& shown = store.location();  // the password masked
  if (!store.hasSchema()) {
    fmt::print(stderr, "gemmtune: no tuning results yet in {}; run `gemmtune tune` first\n", shown);
    return kExitFailure;
  }
  auto gpus = store.gpus();
  auto currentFingerprint = serving::currentFingerprints(gpus);  // GPU name -> the fingerprint tuned last
  const db::ResultFilter filter = filterOf(a, store, currentFingerprint);
  const RowContext context(store, gpus);
  auto present = serving::presentEnvironment(ctx.templatesDir.string());
  std::vector<Row> rows;
  for (auto& r : store.results(filter)) {
    auto check = serving::checkStoredRow(r, present, currentFingerprint);
    auto implausible = context.implausible(r, check.config);
    rows.push_back({std::move(r), std::move(check.staleReasons), std::move(implausible)});
  }

  if (a.json) {
    printJson(rows, context);
    return kExitOk;
  }
  if (a.csv) {
    printCsv(rows, context);
    return kExitOk;
  }
  if (rows.empty()) {
    fmt::print(stderr, "gemmtune: no results match in {}\n", shown);
    return kExitFailure;
  }
  printTable(rows, context);
  return kExitOk;
}

}  // namespace

Action addResultsCommand(CLI::App& app, CliContext& ctx) {
  auto a = std::make_shared<ResultsArgs>();
  auto* sub = app.add_subcommand("results", "List measured results, failures included, and which are stale");
  addDbOption(sub, a->db);
  sub->add_option("--gpu", a->gpu, "Only this GPU: auto, an index of a GPU here, or a stored profile, name or part of it");
  sub->add_option("--size", a->size, "Only this problem: N or MxNxK")->check(nonEmpty)->type_name("N|MxNxK");
  sub->add_option("--layout", a->layout, "Only this layout: nn, nt, tn or tt (op(A) then op(B))")
      ->type_name("nn|nt|tn|tt");
  sub->add_option("--batch", a->batch, "Only this batch count (1: single products)")->type_name("COUNT");
  sub->add_option("--family", a->family, "Only this kernel family (cublas: cuBLAS's own rows)");
  sub->add_option("--status", a->status, "Only this status: ok, rejected, compile_error, ... or e.g. rejected:smem");
  sub->add_flag("--json", a->json, "Machine-readable output (every column, stale reasons)");
  sub->add_flag("--csv", a->csv, "Comma-separated output with a header line");
  sub->footer(fmt::format("Examples:\n"
                          "  gemmtune results --size 4096 --status ok\n"
                          "  gemmtune results --size 512 --layout tn --batch 64\n"
                          "  gemmtune results --gpu h100 --family {} --csv > h100.csv\n"
                          "  gemmtune results --status compile_error --json",
                          exampleFamily()));
  return [a, &ctx] { return run(*a, ctx); };
}

}  // namespace gemmtune::cli
