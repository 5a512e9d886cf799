#include "ReportData.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <tuple>

#include "FamilyRegistry.hpp"
#include "GpuSelect.hpp"
#include "SpeedBound.hpp"
#include "StaleRows.hpp"
#include "gemmtune/Errors.hpp"

namespace gemmtune::report {

std::optional<Fp32Peak> fp32Peak(const GpuSpec& gpu) {
  const auto peak = serving::peakRate(gpu, serving::PrecisionClass::strict);
  if (!peak) return std::nullopt;
  return Fp32Peak{gpu.smCount, serving::fp32LanesPerSm(gpu.ccMajor, gpu.ccMinor), gpu.clockKhz / 1e6, peak->gflops};
}

std::string sizeLabel(const db::ProblemKey& p) {
  std::string s = p.m == p.n && p.n == p.k ? std::to_string(p.m) : fmt::format("{}x{}x{}", p.m, p.n, p.k);
  s += db::layoutAndBatchSuffix(p);
  if (p.betaClass != "any") s += " beta=" + p.betaClass;
  return s;
}

const MeasuredRow* ReportData::best(size_t size, const std::string& family) const {
  const MeasuredRow* best = nullptr;
  for (const auto& r : rows)
    if (r.size == size && r.family == family && r.ok() && (!best || *r.gflops > *best->gflops)) best = &r;
  return best;
}

namespace {

[[noreturn]] void nothingToReport(const std::string& what) {
  throw Error(what + "; run `gemmtune tune` first");
}

// Grouped by layout and batch (nn single products first, as before batches), then smallest first.
auto sizeOrder(const db::ProblemKey& p) {
  return std::make_tuple(p.layout, p.batch, static_cast<double>(p.m) * p.n * p.k, p.m, p.n, p.k, p.betaClass);
}

double flopsOf(const db::ProblemKey& p) { return 2.0 * double(p.m) * double(p.n) * double(p.k) * double(p.batch); }

const db::StoredGpu& defaultGpu(const db::ResultStore& store, const std::vector<db::StoredGpu>& gpus,
                                const std::filesystem::path& dbPath) {
  std::vector<const db::StoredGpu*> order;
  for (const auto& g : gpus) order.push_back(&g);
  std::sort(order.begin(), order.end(),
            [](auto* a, auto* b) { return std::tie(a->lastRunAt, a->id) > std::tie(b->lastRunAt, b->id); });
  for (const auto* g : order) {
    db::ResultFilter f;
    f.gpuId = g->id;
    if (!store.measuredSizes(f).empty()) return *g;
  }
  nothingToReport(fmt::format("no tuning results yet in {}", dbPath.string()));
}

std::string chooseFamily(const ReportData& d, const std::string& wanted) {
  if (!wanted.empty()) {
    FamilyRegistry::builtin().get(wanted);  // UsageError listing the families for a typo
    if (std::find(d.families.begin(), d.families.end(), wanted) == d.families.end())
      nothingToReport(fmt::format("no current results of family {} for {} in {}", wanted, d.gpu.name,
                                  d.dbPath.string()));
    return wanted;
  }
  // The family with the most measured rows: the largest space, the most informative heatmap.
  std::map<std::string, size_t> count;
  for (const auto& r : d.rows) ++count[r.family];
  return std::max_element(count.begin(), count.end(), [](auto& a, auto& b) { return a.second < b.second; })->first;
}

size_t chooseSize(const ReportData& d, const std::string& wanted) {
  if (!wanted.empty()) {
    db::ProblemKey p = serving::parseProblemSize(wanted);
    std::optional<size_t> found;
    for (size_t i = 0; i < d.sizes.size(); ++i) {
      const auto& s = d.sizes[i];
      if (s.m == p.m && s.n == p.n && s.k == p.k && (!found || s == p)) found = i;
    }
    if (!found) {
      std::vector<std::string> measured;
      for (const auto& s : d.sizes) measured.push_back(sizeLabel(s));
      nothingToReport(fmt::format("no current results at size {} for {} (measured: {})", sizeLabel(p), d.gpu.name,
                                  fmt::join(measured, ", ")));
    }
    return *found;
  }
  // The largest problem the heatmap family was measured at (the first in the list's order of
  // equally large ones: nn before other layouts).
  std::optional<size_t> best;
  for (const auto& r : d.rows)
    if (r.family == d.heatmapFamily &&
        (!best || flopsOf(d.sizes[r.size]) > flopsOf(d.sizes[*best]) ||
         (flopsOf(d.sizes[r.size]) == flopsOf(d.sizes[*best]) && r.size < *best)))
      best = r.size;
  return best.value_or(0);
}

}  // namespace

ReportData loadReportData(const db::ResultStore& store, const std::filesystem::path& dbPath, const ReportQuery& query,
                          const db::PresentEnvironment& present) {
  ReportData d;
  d.dbPath = dbPath;
  auto gpus = store.gpus();
  if (gpus.empty()) nothingToReport(fmt::format("no tuning results yet in {}", dbPath.string()));
  auto current = serving::currentFingerprints(gpus);

  db::StoredGpu gpu;
  if (!query.gpu.empty()) {
    serving::SelectedGpu sel = serving::selectGpu(store, query.gpu);
    if (!sel.stored) nothingToReport(fmt::format("no tuning results for {} in {}", sel.spec.name, dbPath.string()));
    if (sel.detected) current[sel.spec.name] = sel.fingerprint;
    gpu = *sel.stored;
  } else {
    gpu = defaultGpu(store, gpus, dbPath);
  }
  d.gpu = gpu.spec;
  d.fingerprint = gpu.fingerprint;
  for (const auto& g : gpus)
    if (g.fingerprint != gpu.fingerprint &&
        std::find(d.otherGpus.begin(), d.otherGpus.end(), g.spec.name) == d.otherGpus.end())
      d.otherGpus.push_back(g.spec.name);

  db::ResultFilter filter;
  filter.gpuId = gpu.id;
  struct Pending {
    MeasuredRow row;
    db::ProblemKey problem;
  };
  std::vector<Pending> pending;
  for (auto& r : store.results(filter)) {
    if (db::isCublasRow(r)) continue;  // cuBLAS is the report's baseline column, not a family of rows
    auto [config, stale] = serving::checkStoredRow(r, present, current);
    if (!stale.empty()) {
      ++d.staleRows;
      for (const auto& why : stale) ++d.staleReasons[why];
      continue;
    }
    MeasuredRow row{r.family, r.instance(), r.fullStatus(), *config, 0, r.gflops, r.occupancy, r.registers,
                    r.limiter, r.runUid};
    pending.push_back({std::move(row), r.key.problem});
  }
  if (pending.empty())
    nothingToReport(fmt::format("no current tuning results for {} in {}{}", gpu.spec.name, dbPath.string(),
                                d.staleRows ? fmt::format(" ({} stale rows)", d.staleRows) : std::string()));

  for (const auto& p : pending)
    if (std::find(d.sizes.begin(), d.sizes.end(), p.problem) == d.sizes.end()) d.sizes.push_back(p.problem);
  std::sort(d.sizes.begin(), d.sizes.end(), [](auto& a, auto& b) { return sizeOrder(a) < sizeOrder(b); });
  std::set<std::string> families;
  for (auto& p : pending) {
    p.row.size = std::find(d.sizes.begin(), d.sizes.end(), p.problem) - d.sizes.begin();
    families.insert(p.row.family);
    ++d.rowsPerRun[p.row.runUid];
    d.rows.push_back(std::move(p.row));
  }
  d.families.assign(families.begin(), families.end());

  std::map<size_t, std::string> baselineTime;
  for (const auto& b : store.baselines()) {
    if (b.gpuFingerprint != gpu.fingerprint || b.library != "cublas" || !(b.gflops > 0)) continue;
    auto it = std::find(d.sizes.begin(), d.sizes.end(), b.problem);
    if (it == d.sizes.end()) continue;
    size_t i = it - d.sizes.begin();
    if (!baselineTime.count(i) || b.measuredAt > baselineTime[i]) {
      baselineTime[i] = b.measuredAt;
      d.cublasGflops[i] = b.gflops;
    }
  }
  for (const auto& r : store.runs())
    if (r.gpuFingerprint == gpu.fingerprint) d.runs.push_back(r);

  d.heatmapFamily = chooseFamily(d, query.family);
  d.chosenSize = chooseSize(d, query.size);
  d.peak = fp32Peak(d.gpu);
  return d;
}

}  // namespace gemmtune::report
