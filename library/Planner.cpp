#include "Planner.hpp"

#include <fmt/format.h>

#include <optional>

#include "CudaDriver.hpp"
#include "ResultStore.hpp"
#include "DbPath.hpp"
#include "FamilyRegistry.hpp"
#include "Lookup.hpp"
#include "PresentEnvironment.hpp"
#include "SystemSnapshot.hpp"

namespace gemmtune::library {

namespace {

serving::LookupPolicy policy(bool cublas, PrecisionClass precision) {
  serving::LookupPolicy p;
  p.cublas = cublas;
  p.precision = precision;
  return p;
}

constexpr const char* kTuneHint = "run `gemmtune tune` to add tuned results";

// This build's environment, and the driver's version where there is a driver: rows measured under
// another driver are stale; offline (no driver) the part is not judged.
db::PresentEnvironment presentHere() {
  db::PresentEnvironment present = serving::presentEnvironment();
  if (CudaDriver::available()) present.driverVersion = CudaDriver::get().version();
  return present;
}

}  // namespace

Config defaultConfig(const Layout& layout) {
  Config c = FamilyRegistry::builtin().libraryDefault();
  c.layout = layout;
  return c;
}

Plan Planner::fallback(std::string why, const Layout& layout) {
  Plan p;
  p.config = defaultConfig(layout);
  p.choice.instance = p.config.name();
  p.choice.match = Match::default_config;
  p.choice.note = std::move(why);
  return p;
}

namespace {

// The user's database (a path, or empty: $GEMMTUNE_DB, else the XDG default), then the system
// snapshot: $GEMMTUNE_SYSTEM_DB, else the installed <prefix>/share/gemmtune/system.db if present.
std::vector<std::string> defaultStores(const std::string& userDb) {
  std::vector<std::string> out{userDb};
  if (auto system = systemSnapshotLocation()) out.push_back(std::move(*system));
  return out;
}

}  // namespace

Planner::Planner(const std::filesystem::path& dbPath, Warnings& warnings, bool cublas)
    : Planner(defaultStores(dbPath.string()), warnings, cublas) {}

Planner::Planner(const std::vector<std::string>& locations, Warnings& warnings, bool cublas, bool measuredWinsOnly,
                 PrecisionClass precision)
    : warnings_(warnings), cublas_(cublas), measuredWinsOnly_(measuredWinsOnly), precision_(precision) {
  std::vector<std::string> wanted = locations.empty() ? defaultStores({}) : locations;
  std::vector<std::pair<std::size_t, std::string>> missing;  // warned only when no store is usable
  for (const auto& location : wanted) {
    Source& source = sources_.emplace_back();
    try {
      source.location = db::resolveDatabasePath(location).string();
      open(source);
    } catch (const std::exception& e) {
      giveUp(source,
             fmt::format("the tuning database {} cannot be used ({})",
                         db::maskLocation(source.location.empty() ? location : source.location), e.what()));
    }
  }
  bool anyUsable = false;
  for (const auto& s : sources_) anyUsable = anyUsable || s.lookup;
  if (!anyUsable)
    for (const auto& s : sources_)
      warnings_.once(s.unusable, fmt::format("{}: {}", s.unusable, withoutRows(Layout{})));
}

Planner::~Planner() = default;

void Planner::open(Source& source) {
  const std::string& path = source.location;
  if (!db::storeMayExist(path)) {
    giveUp(source, fmt::format("no tuning database at {}; {}", db::maskLocation(path), kTuneHint), true);
    return;
  }
  // quick_check reads the whole file; damage in the pages a lookup reads still surfaces as an
  // error at that lookup, which plan() turns into the default.
  source.db = db::openStore(path, db::OpenOptions{db::OpenMode::ReadOnly, db::OpenCheck::Header});
  if (!source.db->hasSchema()) {
    giveUp(source, fmt::format("the tuning database {} is empty; {}", db::maskLocation(path), kTuneHint), true);
    return;
  }
  source.lookup = std::make_unique<serving::Lookup>(*source.db, presentHere(), policy(cublas_, precision_));
}

serving::Lookup& Planner::lookupOf(Source& source, bool cublas) {
  if (cublas || !cublas_) return *source.lookup;  // the main lookup's policy already excludes cuBLAS
  if (!source.kernelsOnly)
    source.kernelsOnly = std::make_unique<serving::Lookup>(*source.db, presentHere(), policy(false, precision_));
  return *source.kernelsOnly;
}

void Planner::giveUp(Source& source, const std::string& why, bool quiet) {
  source.kernelsOnly.reset();
  source.lookup.reset();
  source.db.reset();
  source.unusable = why;
  // Missing and empty stores are reported by the constructor, only when none is usable.
  if (!quiet)
    warnings_.once(why, fmt::format("{}: {}", why, withoutRows(Layout{})));
}

std::string Planner::withoutRows(const Layout& layout) const {
  if (measuredWinsOnly_) return "sgemm() declines those calls (Options::measuredWinsOnly: no measured row)";
  return "sgemm() runs the built-in default kernel " + defaultConfig(layout).name();
}

std::string Planner::locations() const {
  std::string out;
  for (const auto& s : sources_) out += (out.empty() ? "" : " or ") + db::maskLocation(s.location);
  return out;
}

Plan Planner::plan(const GpuSpec& gpu, const GemmShape& shape, bool allowCublas) {
  std::lock_guard lock(mutex_);
  // Highest precedence first: the first exact answer wins, else the first nearest-size one.
  std::optional<serving::LookupResult> nearest;
  std::optional<serving::LookupResult> found;
  std::string unusable;
  for (auto& source : sources_) {
    if (!source.lookup) {
      if (unusable.empty()) unusable = source.unusable;
      continue;
    }
    serving::LookupResult r;
    try {
      r = lookupOf(source, allowCublas).best(gpu, db::problemKeyOf(shape));
    } catch (const std::exception& e) {
      giveUp(source, fmt::format("the tuning database {} failed ({})", db::maskLocation(source.location), e.what()));
      if (unusable.empty()) unusable = source.unusable;
      continue;
    }
    if (r.quality == serving::MatchQuality::none || !(r.config || r.cublas)) continue;
    if (r.quality == serving::MatchQuality::exact) {
      found = std::move(r);
      break;
    }
    if (!nearest) nearest = std::move(r);
  }
  if (!found) found = std::move(nearest);
  bool anyUsable = false;
  for (const auto& s : sources_) anyUsable = anyUsable || s.lookup;
  if (!anyUsable) return fallback(unusable, shape.layout);
  if (!found) {
    std::string why = fmt::format("no valid tuned result for {} in {}; {}", gpu.name, locations(), kTuneHint);
    warnings_.once("gpu:" + gpu.name, fmt::format("{}: {}", why, withoutRows(shape.layout)));
    return fallback(why, shape.layout);
  }
  return planOf(*found, shape);
}

Plan Planner::planOf(serving::LookupResult& r, const GemmShape& shape) {
  Plan p;
  p.choice.instance = r.instance;
  p.choice.match = r.quality == serving::MatchQuality::exact ? Match::exact : Match::nearest_size;
  p.choice.measuredSize = db::shapeOf(r.measuredProblem).str();
  p.choice.measuredGflops = r.gflops;
  p.choice.cublasGflops = r.cublasGflops.value_or(0);
  if (p.choice.match == Match::nearest_size) p.predictedMs = r.predictedMs;
  if (r.cublas) {
    p.cublas = true;
    p.choice.note = p.choice.match == Match::exact
                        ? fmt::format("cuBLAS was measured fastest at {}", p.choice.measuredSize)
                        : fmt::format("cuBLAS is predicted fastest for {}: {}", shape.str(), r.reason);
    return p;
  }
  p.config = *r.config;
  if (p.choice.match == Match::nearest_size)
    p.choice.note = fmt::format("{} was measured at {}, chosen for {} as the {}{}", r.measuredInstance,
                                p.choice.measuredSize, shape.str(), r.reason,
                                r.config->guarded && !r.measuredInstance.ends_with("_guarded")
                                    ? " (guarded form: its tiles do not divide the size)"
                                    : "");
  p.cubin = std::move(r.cubin);
  p.loweredNames = std::move(r.loweredNames);
  return p;
}

std::string notAMeasuredWin(const Plan& plan, const GemmProblem& problem) {
  if (plan.cublas) return fmt::format("cuBLAS is the fastest here ({})", plan.choice.note);
  if (plan.choice.match != Match::exact)
    return "no measured row for this problem on this GPU (Options::measuredWinsOnly leaves it to the caller)";
  if (!(plan.choice.cublasGflops > 0))
    return fmt::format("cuBLAS was not measured at {} on this GPU, so no row is known to beat it "
                       "(Options::measuredWinsOnly leaves it to the caller)",
                       plan.choice.measuredSize);
  if (plan.choice.measuredGflops < Library::kMeasuredWinMargin * plan.choice.cublasGflops)
    return fmt::format("{} measured {:.0f} GFLOP/s here, cuBLAS {:.0f}: not {:.0f} % faster (Options::measuredWinsOnly "
                       "leaves it to the caller)",
                       plan.choice.instance, plan.choice.measuredGflops, plan.choice.cublasGflops,
                       100 * (Library::kMeasuredWinMargin - 1));
  if (const LaunchPlan launch = planLaunch(plan.config, problem); !launch.runnable())
    return fmt::format("{} cannot run these operands in its measured form ({}): Options::measuredWinsOnly leaves "
                       "it to the caller",
                       plan.choice.instance, launch.refusal);
  return {};
}

}  // namespace gemmtune::library
