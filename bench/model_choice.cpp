// model_choice: the family model on shapes its database never measured. The model is calibrated
// from one database (the main job's) and judged on another that measured other shapes (a
// `tune --shapes`/`--seen` run on them: the truth). For every truth shape and every configuration
// measured there whose program the calibration database holds, the configuration's time is
// predicted as the lookup would (its program's rows, its family's correction) and compared:
//   - error: |predicted/measured − 1| over those rows (median, worst);
//   - choice: among the configurations measured at the shape, the one predicted fastest against
//     the one measured fastest (regret = measured(pick)/measured(best), geometric mean and worst),
//     and the pick against cuBLAS's measured time there (our kernels only; M or N ≤ 64 apart).
// The choice is restricted to what the truth measured, so it judges the model's ranking, not the
// lookup's candidate set. Runs without a GPU (the stored GPU spec).
// Usage: model_choice [--gpu SUBSTRING] [-v] CALIBRATION_DATABASE TRUTH_DATABASE
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "FamilyRegistry.hpp"
#include "NearestChoice.hpp"
#include "ResultStore.hpp"
#include "SizeDistance.hpp"

using namespace gemmtune;
using namespace gemmtune::db;
using namespace gemmtune::serving;

namespace {

struct Row {
  Config config;
  StoredResult stored;
};

std::vector<Row> rowsOf(const ResultStore& store, const StoredGpu& gpu) {
  ResultFilter filter;
  filter.gpuId = gpu.id;
  filter.status = "ok";
  std::vector<Row> out;
  for (StoredResult& row : store.results(filter)) {
    if (!(row.medianMs.value_or(0) > 0)) continue;
    // cuBLAS's own call is the baseline here, not a cuBLASLt configuration's row.
    if (row.family == kCublasFamily && row.instance() != cublasInstance(row.key.problem.layout)) continue;
    Config config;
    if (row.family != kCublasFamily) {
      try {
        config = FamilyRegistry::builtin().parseName(row.instance());
      } catch (const std::exception&) {
        continue;  // a family this build does not have
      }
    }
    out.push_back({std::move(config), std::move(row)});
  }
  return out;
}

std::optional<StoredGpu> gpuNamed(const ResultStore& store, const std::string& filter) {
  for (const StoredGpu& g : store.gpus())
    if (g.spec.name.find(filter) != std::string::npos) return g;
  return std::nullopt;
}

std::string shapeKey(const ProblemKey& p) { return fmt::format("{}x{}x{}|{}|{}", p.m, p.n, p.k, p.layout, p.batch); }
std::string groupOf(const ProblemKey& p) { return fmt::format("{}|{}", p.layout, p.batch); }

struct Stats {
  std::vector<double> values;
  void add(double v) { values.push_back(v); }
  double median() const {
    if (values.empty()) return 0;
    auto v = values;
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  }
  double worst() const { return values.empty() ? 0 : *std::max_element(values.begin(), values.end()); }
  double least() const { return values.empty() ? 0 : *std::min_element(values.begin(), values.end()); }
  double geomean() const {
    double s = 0;
    for (double v : values) s += std::log(v);
    return values.empty() ? 0 : std::exp(s / double(values.size()));
  }
};

struct Calibration {
  std::map<std::string, std::vector<Observation>> byProgram, byFamily;  // group + name
  std::set<std::string> shapes;                                         // shapeKey of every row
  std::map<std::string, std::vector<std::pair<ProblemKey, bool>>> guardedAt;  // program: (problem, ran guarded)
};

// Two of the lookup's guards (serving/LookupNearest.cpp): programs anchored farther than the nearest
// anchor plus this slack do not compete, and a guarded form never measured counts double. (Not its
// slice rules: this tool predates them, so its choices may differ from the lookup's there.)
constexpr double kAnchorSlack = 0.5;
constexpr double kUnmeasuredGuardedPenalty = 2.0;

// The distance from `p` to the program's nearest row, and whether that row ran guarded.
std::pair<double, bool> anchorOf(const ProblemKey& p, const std::vector<std::pair<ProblemKey, bool>>& rows) {
  std::pair<double, bool> best{1e300, false};
  for (const auto& [at, guarded] : rows)
    if (double d = sizeDistance(p, at); d < best.first) best = {d, guarded};
  return best;
}

Calibration calibrationOf(const std::vector<Row>& rows, const GpuSpec& gpu) {
  Calibration c;
  for (const Row& r : rows) {
    if (r.stored.family == kCublasFamily) continue;
    const ProblemKey& p = r.stored.key.problem;
    c.shapes.insert(shapeKey(p));
    const double raw = rawMsOf(r.config, r.stored, gpu, p);
    if (!(raw > 0)) continue;
    const Observation o{p, *r.stored.medianMs, raw};
    c.byProgram[groupOf(p) + r.config.programKey()].push_back(o);
    c.guardedAt[groupOf(p) + r.config.programKey()].push_back({p, r.config.guarded});
    c.byFamily[groupOf(p) + r.config.family->name].push_back(o);
  }
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"The family model's error and choices on shapes the calibration database never measured (no GPU)"};
  std::string calibrationDb, truthDb, gpuFilter = "H100";
  bool verbose = false, guards = false;
  app.add_option("calibration", calibrationDb, "database the model is calibrated from (the main job's)")->required();
  app.add_option("truth", truthDb, "database that measured other shapes")->required();
  app.add_option("--gpu", gpuFilter, "the GPU whose name contains this (default H100)");
  app.add_flag("-v", verbose, "one line per shape");
  app.add_flag("--guards", guards, "apply the lookup's anchor bound and guarded-form penalty");
  CLI11_PARSE(app, argc, argv);
  try {
    auto calib = openStore(calibrationDb, {OpenMode::ReadOnly, OpenCheck::Quick});
    auto truth = openStore(truthDb, {OpenMode::ReadOnly, OpenCheck::Quick});
    const auto gpu = gpuNamed(*calib, gpuFilter);
    const auto truthGpu = gpuNamed(*truth, gpuFilter);
    if (!gpu || !truthGpu) throw std::runtime_error("no GPU named like '" + gpuFilter + "' in both databases");
    const Calibration cal = calibrationOf(rowsOf(*calib, *gpu), gpu->spec);

    std::map<std::string, std::vector<Row>> byShape;
    for (Row& r : rowsOf(*truth, *truthGpu)) byShape[shapeKey(r.stored.key.problem)].push_back(std::move(r));
    Stats error, regret, ours, oursSkinny;
    for (const auto& [shape, rows] : byShape) {
      if (cal.shapes.contains(shape)) continue;  // not held out
      std::optional<double> cublasMs;
      const Row* pick = nullptr;
      const Row* best = nullptr;
      double pickPredicted = 0, pickScore = 0;
      double nearestAnchor = 1e300;
      for (const auto& [program, at] : cal.guardedAt)
        if (program.starts_with(groupOf(rows.front().stored.key.problem)))
          nearestAnchor = std::min(nearestAnchor, anchorOf(rows.front().stored.key.problem, at).first);
      for (const Row& r : rows) {
        const ProblemKey& p = r.stored.key.problem;
        const double measured = *r.stored.medianMs;
        if (r.stored.family == kCublasFamily) {
          cublasMs = measured;
          continue;
        }
        const std::string g = groupOf(p);
        auto own = cal.byProgram.find(g + r.config.programKey());
        auto family = cal.byFamily.find(g + r.config.family->name);
        if (own == cal.byProgram.end() || family == cal.byFamily.end()) continue;
        const double ratio = calibrationRatio(p, own->second, family->second);
        const double predicted = rawMsOf(r.config, r.stored, gpu->spec, p) * ratio;
        if (!(predicted > 0)) continue;
        error.add(std::abs(predicted / measured - 1));
        if (!best || measured < *best->stored.medianMs) best = &r;
        const auto [anchorDistance, anchorGuarded] = anchorOf(p, cal.guardedAt.at(g + r.config.programKey()));
        if (guards && anchorDistance > nearestAnchor + kAnchorSlack) continue;
        const double score = predicted * (guards && r.config.guarded && !anchorGuarded ? kUnmeasuredGuardedPenalty : 1.0);
        if (!pick || score < pickScore) pick = &r, pickPredicted = predicted, pickScore = score;
      }
      if (!pick) continue;
      const double pickMs = *pick->stored.medianMs;
      regret.add(pickMs / *best->stored.medianMs);
      const ProblemKey& p = pick->stored.key.problem;
      if (cublasMs) (p.m <= 64 || p.n <= 64 ? oursSkinny : ours).add(*cublasMs / pickMs);
      if (verbose)
        fmt::print("{:<24} pick {:<52} {:>8.4f} ms (pred {:.4f}), best {:<52} {:>8.4f} ms, cuBLAS {:.4f}\n", shape,
                   pick->config.name(), pickMs, pickPredicted, best->config.name(), *best->stored.medianMs,
                   cublasMs.value_or(0));
    }
    Stats all = ours;
    for (double v : oursSkinny.values) all.add(v);
    fmt::print("held-out shapes: {} rows, error median {:.1f}% worst {:.0f}%\n", error.values.size(), 100 * error.median(),
               100 * error.worst());
    fmt::print("choice among measured: {} shapes, regret geomean {:.3f} worst {:.2f}\n", regret.values.size(),
               regret.geomean(), regret.worst());
    fmt::print("pick vs cuBLAS: all {:.3f} ({}), skinny {:.3f} ({}), other {:.3f} ({}), worst {:.2f}\n", all.geomean(),
               all.values.size(), oursSkinny.geomean(), oursSkinny.values.size(), ours.geomean(), ours.values.size(),
               all.least());
  } catch (const std::exception& e) {
    fmt::print(stderr, "model_choice: {}\n", e.what());
    return 1;
  }
  return 0;
}
