#include "Planner.hpp"

#include <fmt/format.h>

#include "CudaDriver.hpp"
#include "ResultStore.hpp"
#include "DbPath.hpp"
#include "FamilyRegistry.hpp"
#include "Lookup.hpp"
#include "PresentBuild.hpp"

namespace gemmtune::library {

namespace {

std::string sizeText(long long m, long long n, long long k) {
  return m == n && n == k ? std::to_string(m) : fmt::format("{}x{}x{}", m, n, k);
}

constexpr const char* kTuneHint = "run `gemmtune tune` to add tuned results";

}  // namespace

Config defaultConfig() { return FamilyRegistry::builtin().libraryDefault(); }

Plan Planner::fallback(std::string why) {
  Plan p;
  p.config = defaultConfig();
  p.choice.instance = p.config.name();
  p.choice.match = Match::default_config;
  p.choice.note = std::move(why);
  return p;
}

Planner::Planner(const std::filesystem::path& dbPath, Warnings& warnings) : warnings_(warnings) {
  try {
    open(dbPath);
  } catch (const std::exception& e) {
    giveUp(fmt::format("the tuning database {} cannot be used ({})",
                       path_.empty() ? db::maskLocation(dbPath.string()) : db::maskLocation(path_.string()), e.what()));
  }
}

Planner::~Planner() = default;

void Planner::open(const std::filesystem::path& dbPath) {
  path_ = db::resolveDatabasePath(dbPath.string());
  if (!db::storeMayExist(path_.string())) {
    giveUp(fmt::format("no tuning database at {}; {}", db::maskLocation(path_.string()), kTuneHint));
    return;
  }
  // quick_check reads the whole file; damage in the pages a lookup reads still surfaces as an
  // error at that lookup, which plan() turns into the default.
  db_ = db::openStore(path_.string(), db::OpenOptions{db::OpenMode::ReadOnly, db::OpenCheck::Header});
  if (!db_->hasSchema()) {
    giveUp(fmt::format("the tuning database {} is empty; {}", db::maskLocation(path_.string()), kTuneHint));
    return;
  }
  db::PresentEnvironment present = serving::presentEnvironment();
  // Rows measured under another driver are stale; offline (no driver) the part is not judged.
  if (CudaDriver::available()) present.driverVersion = CudaDriver::get().version();
  lookup_ = std::make_unique<serving::Lookup>(*db_, std::move(present));
}

void Planner::giveUp(const std::string& why) {
  lookup_.reset();
  db_.reset();
  unusable_ = why;
  warnings_.once(why, fmt::format("{}: sgemm() runs the built-in default kernel {}", why, defaultConfig().name()));
}

Plan Planner::plan(const GpuSpec& gpu, long long M, long long N, long long K) {
  std::lock_guard lock(mutex_);
  if (!lookup_) return fallback(unusable_);
  serving::LookupResult r;
  try {
    r = lookup_->best(gpu, db::ProblemKey{M, N, K});
  } catch (const std::exception& e) {
    giveUp(fmt::format("the tuning database {} failed ({})", db::maskLocation(path_.string()), e.what()));
    return fallback(unusable_);
  }
  if (r.quality == serving::MatchQuality::none || !r.config) {
    std::string why = fmt::format("no valid tuned result for {} in {}; {}", gpu.name, db::maskLocation(path_.string()), kTuneHint);
    warnings_.once("gpu:" + gpu.name, fmt::format("{}: sgemm() runs the built-in default kernel {}", why, defaultConfig().name()));
    return fallback(why);
  }
  Plan p;
  p.config = *r.config;
  p.choice.instance = r.instance;
  p.choice.match = r.quality == serving::MatchQuality::exact ? Match::exact : Match::nearest_size;
  p.choice.measuredSize = sizeText(r.measuredProblem.m, r.measuredProblem.n, r.measuredProblem.k);
  p.choice.measuredGflops = r.gflops;
  if (p.choice.match == Match::nearest_size)
    p.choice.note = fmt::format("{} was measured at {}, the nearest tuned size to {}{}", r.measuredInstance,
                                p.choice.measuredSize, sizeText(M, N, K),
                                r.instance != r.measuredInstance ? " (guarded form: its tiles do not divide the size)" : "");
  p.cubin = std::move(r.cubin);
  p.loweredNames = std::move(r.loweredNames);
  return p;
}

}  // namespace gemmtune::library
