#include "Lookup.hpp"


#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <tuple>

#include "gemmtune/Errors.hpp"
#include "FamilyRegistry.hpp"
#include "CompileResult.hpp"
#include "LaunchLimits.hpp"
#include "Log.hpp"
#include "SizeDistance.hpp"
#include "SpeedBound.hpp"
#include "StaleRows.hpp"

namespace gemmtune::serving {

namespace {

// How many of a size's fastest rows a lookup reads before it reads them all.
constexpr int kFirstRows = 16;
// Memo key from the fields the fingerprint covers and the SM clock (the speed bound reads it), so
// a warm lookup does not hash.
std::string memoKey(const GpuSpec& g, const ProblemKey& p, const std::string& family) {
  return fmt::format("{}|{}.{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}x{}x{}|{}|{}|{}|{}", g.name, g.ccMajor,
                     g.ccMinor, g.smCount, g.maxThreadsPerBlock, g.maxThreadsPerSm, g.maxBlocksPerSm, g.warpSize,
                     g.regsPerSm, g.regsPerBlock, g.maxRegsPerThread, g.regAllocUnit, g.smemPerSm, g.smemPerBlock,
                     g.smemPerBlockOptin, g.smemReservedPerBlock, g.l2Bytes, g.memClockKhz, g.memBusWidthBits,
                     g.clockKhz, p.m, p.n, p.k, p.layout, p.batch, p.betaClass, family);
}

}  // namespace

std::string_view toString(MatchQuality q) {
  switch (q) {
    case MatchQuality::exact: return "exact";
    case MatchQuality::nearest_size: return "nearest_size";
    case MatchQuality::none: return "none";
  }
  return "none";
}

std::optional<std::string> launchProblem(const Config& config, const StoredResult& row, const GpuSpec& gpu,
                                         const ProblemKey& problem) {
  const Family& f = *config.family;
  const int threads = f.threadsPerBlock(config);
  if (row.threadsPerBlock && *row.threadsPerBlock != threads)
    return fmt::format("the row says {} threads per block, the family spec {}", *row.threadsPerBlock, threads);
  const int staticSmem = std::max(f.staticSmemBytes(config), row.staticSmemBytes.value_or(0));
  if (auto v = kernelLimitViolation(gpu, {threads, row.registers.value_or(-1), staticSmem, f.dynamicSmemBytes(config)}))
    return fmt::format("{} ({})", v->reason, v->limit);
  const LaunchPlan plan = planLaunch(config, GemmProblem::packed(shapeOf(problem)));
  if (!plan.runnable()) return plan.refusal;
  for (const KernelLaunch& l : plan.launches)
    if (auto v = gridLimitViolation(gpu, l.grid)) return fmt::format("grid {}", v->reason);
  return std::nullopt;
}

Lookup::Lookup(const ResultStore& store, PresentEnvironment present, LookupPolicy policy)
    : store_(store), present_(std::move(present)), policy_(policy) {}

void Lookup::clear() {
  std::lock_guard lock(mutex_);
  memo_.clear();
}

LookupResult Lookup::best(const GpuSpec& gpu, const ProblemKey& problem, const std::string& family) {
  std::string key = memoKey(gpu, problem, family);
  std::lock_guard lock(mutex_);
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  LookupResult r = compute(gpu, problem, family);
  ++computed_;
  memo_.emplace(std::move(key), r);
  return r;
}

std::optional<std::int64_t> Lookup::gpuId(const GpuSpec& gpu) {
  return store_.gpuId(gpuFingerprint(gpu));
}

void Lookup::skip(const StoredResult& row, const std::string& why) {
  if (reported_.insert(fmt::format("{}\n{}", row.id, why)).second)
    logger()->warn("skipping stored result {} ({} at {}x{}x{}): {}", row.id, row.instance(), row.key.problem.m,
                   row.key.problem.n, row.key.problem.k, why);
}

std::optional<Config> Lookup::usable(const StoredResult& row, const GpuSpec& gpu, const ProblemKey& asked, bool exact) {
  Config config;
  try {
    config = FamilyRegistry::builtin().parseName(row.instance());
  } catch (const UsageError& e) {
    skip(row, e.what());
    return std::nullopt;
  }
  if (config.family->name != row.family) {
    skip(row, fmt::format("its family column says '{}'", row.family));
    return std::nullopt;
  }
  // The rule itself; the reads also leave these families out (reads.filter.notFamilies) so that
  // their rows take no place among a size's first rows or the nearest sizes.
  if (config.family->precision > policy_.precision) return std::nullopt;
  // A tensor-core row vouches for its accuracy at its own problem only (worker/FaithfulCheck: no
  // more error than cuBLAS SGEMM there; at a shorter K it can have more): never elsewhere. The
  // nearest-size reads leave these families out too (computeFrom).
  if (config.family->precision > PrecisionClass::strict && !exact) return std::nullopt;
  StoredKeyParts parts{row.key.driverVersion, row.key.nvrtcVersion, row.key.compileOptions, row.key.sourceHash,
                       row.key.methodVersion};
  if (auto stale = staleReasons(parts, &config.family->name, present_); !stale.empty()) {
    // Stale rows are expected after an upgrade: not worth a warning each.
    logger()->debug("stored result {} ({}) is stale: {}", row.id, row.instance(), fmt::join(stale, ", "));
    return std::nullopt;
  }
  // A row measures its own layout's kernel; then (the fallbacks) it may run the asked layout.
  if (config.layout.text() != row.key.problem.layout) {
    skip(row, fmt::format("its instance reads layout {}, the row says {}", config.layout.text(), row.key.problem.layout));
    return std::nullopt;
  }
  config.layout = shapeOf(asked).layout;
  if (!config.guarded && !planLaunch(config, GemmProblem::packed(shapeOf(asked))).runnable()) {
    if (exact) {
      skip(row, "an unguarded kernel cannot be correct at this size");
      return std::nullopt;
    }
    config.guarded = true;
  }
  if (auto problem = launchProblem(config, row, gpu, asked)) {
    // At its own size that is a damaged row (threads, registers, shared memory the GPU cannot
    // give); offered to another size and runnable at its own (a split-K too deep for a larger C,
    // say) it is simply no candidate there — not worth a warning per row.
    if (exact || launchProblem(config, row, gpu, row.key.problem))
      skip(row, *problem);
    else
      logger()->debug("stored result {} ({}) cannot run {}x{}x{}: {}", row.id, row.instance(), asked.m, asked.n,
                      asked.k, *problem);
    return std::nullopt;
  }
  if (auto implausible = implausibleSpeed(row, gpu, precisionClassOf(*config.family))) {
    skip(row, *implausible);
    return std::nullopt;
  }
  return config;
}

bool Lookup::cublasUsable(const StoredResult& row, const GpuSpec& gpu, const ProblemKey& asked, bool exact) {
  // Not an error to see one: a policy or a nearer size simply does not take cuBLAS's rows. It is
  // exact only: elsewhere its rows only predict cuBLAS's time (LookupNearest.cpp), and another
  // layout or batch is another cuBLAS kernel.
  if (!policy_.cublas || !exact || row.key.problem != asked) return false;
  if (!isCublasRow(row)) {
    skip(row, fmt::format("a cuBLAS row must be named {} or {}_<cuBLASLt configuration>",
                          cublasInstance(row.key.problem.layout), cublasInstance(row.key.problem.layout)));
    return false;
  }
  StoredKeyParts parts{row.key.driverVersion, row.key.nvrtcVersion, row.key.compileOptions, row.key.sourceHash,
                       row.key.methodVersion};
  if (auto stale = staleReasons(parts, nullptr, present_); !stale.empty()) {
    logger()->debug("stored result {} ({}) is stale: {}", row.id, row.instance(), fmt::join(stale, ", "));
    return false;
  }
  if (auto implausible = implausibleSpeed(row, gpu, PrecisionClass::strict)) {  // default math: FP32, no TF32
    skip(row, *implausible);
    return false;
  }
  return true;
}

LookupResult Lookup::answer(const Reads& reads, const Candidate& c, MatchQuality quality,
                            const ProblemKey& measured) const {
  LookupResult out;
  out.quality = quality;
  if (c.cublas) {
    out.cublas = true;
    out.instance = c.row->instance();
  } else {
    out.config = c.config;
    out.instance = c.config.name();
  }
  out.measuredInstance = c.row->instance();
  out.measuredProblem = measured;
  out.distance = sizeDistance(reads.asked, measured);
  out.gflops = c.row->gflops.value_or(0);
  out.medianMs = c.row->medianMs.value_or(0);
  out.rowId = c.row->id;
  out.cublasGflops = store_.baselineGflops(reads.gpuId, measured);
  if (!c.cublas && out.instance == out.measuredInstance) {
    out.cubin = store_.cubinOf(c.row->id);
    out.loweredNames = splitLoweredNames(c.row->loweredName);
  }
  return out;
}

// Among the size's fastest few, or among all of them when none of those is valid (stale after an
// upgrade, say): reading every row of a size, each beside its cubin, was most of a cold lookup.
std::vector<Lookup::Candidate> Lookup::validAt(Reads& reads, const ProblemKey& size, bool firstOnly) {
  std::vector<Candidate> found;
  ResultFilter filter = reads.filter;
  filter.m = size.m;
  filter.n = size.n;
  filter.k = size.k;
  for (std::optional<int> limit : {std::optional<int>(kFirstRows), std::optional<int>()}) {
    filter.limit = limit;
    reads.kept.push_back(store_.results(filter));
    for (const StoredResult& row : reads.kept.back()) {
      const bool exact = size == reads.asked;
      if (row.family == kCublasFamily) {
        if (cublasUsable(row, reads.gpu, reads.asked, exact)) {
          found.push_back(Candidate{Config{}, &row, true});
          if (firstOnly) return found;
        }
      } else if (auto config = usable(row, reads.gpu, reads.asked, exact)) {
        found.push_back(Candidate{*config, &row});
        if (firstOnly) return found;
      }
    }
    if (!found.empty() || !limit || reads.kept.back().size() < static_cast<std::size_t>(*limit)) break;
  }
  return found;
}

LookupResult Lookup::compute(const GpuSpec& gpu, const ProblemKey& asked, const std::string& family) {
  // Every query of one answer reads the same committed state: a tuner replacing the chosen row
  // meanwhile must not pair one measurement's numbers with another's cubin.
  auto view = store_.consistentReads();
  auto id = gpuId(gpu);
  if (!id) return {};
  if (LookupResult r = computeFrom(gpu, *id, asked, asked, family); r.quality != MatchQuality::none) return r;
  // No valid row of this layout and batch: the nearest evidence left, in this order — the same
  // layout unbatched, the plain layout at this batch, the plain problem (the same tiles suit the
  // same sizes; every family reads every layout) — beats the untuned default.
  const ProblemKey tried[] = {ProblemKey{asked.m, asked.n, asked.k, asked.layout, asked.betaClass, 1},
                              ProblemKey{asked.m, asked.n, asked.k, "nn", asked.betaClass, asked.batch},
                              ProblemKey{asked.m, asked.n, asked.k, "nn", asked.betaClass, 1}};
  for (std::size_t i = 0; i < std::size(tried); ++i) {
    const ProblemKey& rowsOf = tried[i];
    if (rowsOf == asked || std::find(tried, tried + i, rowsOf) != tried + i) continue;
    LookupResult r = computeFrom(gpu, *id, asked, rowsOf, family);
    if (r.quality == MatchQuality::none) continue;
    r.quality = MatchQuality::nearest_size;
    r.reason = fmt::format("{} (no tuned {} row: measured as {})", r.reason.empty() ? "fastest measured" : r.reason,
                           shapeOf(asked).str(), shapeOf(rowsOf).str());
    return r;
  }
  return {};
}

LookupResult Lookup::computeFrom(const GpuSpec& gpu, std::int64_t id, const ProblemKey& asked, const ProblemKey& rowsOf,
                                 const std::string& family) {
  Reads reads{gpu, asked, rowsOf, id, {}, {}};
  reads.filter.gpuId = id;
  reads.filter.status = "ok";
  reads.filter.layout = rowsOf.layout;
  reads.filter.batch = rowsOf.batch;
  reads.filter.betaClass = asked.betaClass;
  if (!family.empty()) reads.filter.family = family;
  // Families above the caller's precision are left out in the store, not after it: their rows
  // (tensor cores: the fastest) would fill a size's first rows and the nearest sizes otherwise.
  for (const Family& f : FamilyRegistry::builtin().all())
    if (f.precision > policy_.precision) reads.filter.notFamilies.push_back(f.name);

  // The asked size first: one indexed query answers most lookups, without listing every
  // measured size (a scan of the whole index on a 100 000-row store).
  if (auto found = validAt(reads, rowsOf, true); !found.empty())
    return answer(reads, found.front(), MatchQuality::exact, rowsOf);
  for (const Family& f : FamilyRegistry::builtin().all())
    if (f.precision > PrecisionClass::strict && f.precision <= policy_.precision) reads.filter.notFamilies.push_back(f.name);
  // Then every other measured size: the family model's choice, or cuBLAS (LookupNearest.cpp).
  const NearestPick pick = pickNearest(reads);
  if (!pick.candidate) return {};
  return answerNearest(reads, pick, family);
}

}  // namespace gemmtune::serving
