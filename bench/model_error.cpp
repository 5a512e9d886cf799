// model_error: how well the family model (model/FamilyModel.hpp, through serving/NearestChoice as
// the lookup uses it) predicts measured rows it was not given. For every ok row of a GPU, the row's
// time is predicted from the OTHER problems' rows of the same layout and batch only (the problem
// is left out: its own configuration's rows elsewhere anchor it, its family's correct it), and
// cuBLAS's time at every measured problem from its other problems. Prints per family and overall:
// rows, median and worst |predicted/measured − 1|. Runs without a GPU (the stored GPU spec).
// The lookup sees only each size's fastest few rows; this reads all of them.
// Usage: model_error [--json] [--gpu SUBSTRING] DATABASE
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>

#include "FamilyRegistry.hpp"
#include "Lookup.hpp"
#include "NearestChoice.hpp"
#include "ResultStore.hpp"

using namespace gemmtune;
using namespace gemmtune::db;
using namespace gemmtune::serving;

namespace {

struct Errors {
  std::vector<double> values;  // |predicted/measured − 1|
  std::string worstAt;
  void add(double predicted, double measured, const std::string& what) {
    const double e = std::abs(predicted / measured - 1);
    if (values.empty() || e > *std::max_element(values.begin(), values.end())) worstAt = what;
    values.push_back(e);
  }
  double median() const {
    if (values.empty()) return 0;
    std::vector<double> v = values;
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  }
  double worst() const { return values.empty() ? 0 : *std::max_element(values.begin(), values.end()); }
};

struct Measured {
  Config config;
  std::string program;
  Observation observation;
};

std::string groupOf(const ProblemKey& p) { return fmt::format("{}|{}", p.layout, p.batch); }
std::string label(const ProblemKey& p) {
  return fmt::format("{}x{}x{}{}", p.m, p.n, p.k, layoutAndBatchSuffix(p));
}

std::vector<Observation> others(const std::vector<const Measured*>& rows, const ProblemKey& leftOut) {
  std::vector<Observation> out;
  for (const Measured* m : rows)
    if (m->observation.problem != leftOut) out.push_back(m->observation);
  return out;
}

// Our families: each ok row predicted from its program's and family's rows at other problems.
std::map<std::string, Errors> familyErrors(const ResultStore& store, const StoredGpu& gpu) {
  ResultFilter filter;
  filter.gpuId = gpu.id;
  filter.status = "ok";
  std::vector<Measured> rows;
  for (const StoredResult& row : store.results(filter)) {
    if (row.family == kCublasFamily || !(row.medianMs.value_or(0) > 0)) continue;
    Config config;
    try {
      config = FamilyRegistry::builtin().parseName(row.instance());
    } catch (const std::exception&) {
      continue;  // a family this build does not have
    }
    const double raw = rawMsOf(config, row, gpu.spec, row.key.problem);
    if (raw > 0) rows.push_back({config, config.programKey(), {row.key.problem, *row.medianMs, raw}});
  }
  std::map<std::string, std::vector<const Measured*>> byProgram, byFamily;
  for (const Measured& m : rows) {
    const std::string g = groupOf(m.observation.problem);
    byProgram[g + m.program].push_back(&m);
    byFamily[g + m.config.family->name].push_back(&m);
  }
  std::map<std::string, Errors> errors;
  for (const Measured& m : rows) {
    const ProblemKey& p = m.observation.problem;
    const std::string g = groupOf(p);
    const auto own = others(byProgram[g + m.program], p);
    const auto family = others(byFamily[g + m.config.family->name], p);
    const double ratio = calibrationRatio(p, own, family);
    if (!(ratio > 0)) continue;  // the family was measured at this problem only
    const std::string what = fmt::format("{} at {}", m.config.name(), label(p));
    errors[m.config.family->name].add(m.observation.rawMs * ratio, m.observation.measuredMs, what);
    errors["(all families)"].add(m.observation.rawMs * ratio, m.observation.measuredMs, what);
  }
  return errors;
}

// cuBLAS at each of its measured problems from its other problems of the same layout and batch.
Errors cublasErrors(const ResultStore& store, const StoredGpu& gpu) {
  const MachineRates rates = machineRatesOf(gpu.spec);
  std::map<std::string, ProblemKey> groups;
  for (const StoredBaseline& b : store.baselines())
    if (b.gpuFingerprint == gpu.fingerprint) groups.emplace(groupOf(b.problem), b.problem);
  Errors errors;
  for (const auto& [g, like] : groups) {
    const auto measured = cublasObservations(store, gpu.id, like, rates);
    std::vector<ProblemKey> done;
    for (const Observation& o : measured) {
      if (std::find(done.begin(), done.end(), o.problem) != done.end()) continue;
      done.push_back(o.problem);
      std::vector<Observation> rest;
      for (const Observation& r : measured)
        if (r.problem != o.problem) rest.push_back(r);
      if (auto p = predictCublas(o.problem, rest, rates)) errors.add(p->ms, o.measuredMs, label(o.problem));
    }
  }
  return errors;
}

nlohmann::json toJson(const Errors& e) {
  return {{"rows", e.values.size()}, {"median", e.median()}, {"worst", e.worst()}, {"worst_at", e.worstAt}};
}

void printRow(const std::string& name, const Errors& e) {
  fmt::print("  {:<16} {:>7} {:>9.1f}% {:>9.1f}%  {}\n", name, e.values.size(), 100 * e.median(), 100 * e.worst(),
             e.worstAt);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"The family model's prediction error on held-out measured rows (no GPU needed)"};
  std::string location, gpuFilter;
  bool json = false;
  app.add_option("database", location, "results database (path, sqlite:PATH or postgresql://...)")->required();
  app.add_option("--gpu", gpuFilter, "only GPUs whose name contains this");
  app.add_flag("--json", json, "one JSON object instead of the table");
  CLI11_PARSE(app, argc, argv);
  try {
    auto store = openStore(location, {OpenMode::ReadOnly, OpenCheck::Quick});
    nlohmann::json out = nlohmann::json::array();
    for (const StoredGpu& gpu : store->gpus()) {
      if (!gpuFilter.empty() && gpu.spec.name.find(gpuFilter) == std::string::npos) continue;
      const auto families = familyErrors(*store, gpu);
      const Errors cublas = cublasErrors(*store, gpu);
      if (json) {
        nlohmann::json f = nlohmann::json::object();
        for (const auto& [name, e] : families) f[name] = toJson(e);
        out.push_back({{"gpu", gpu.spec.name}, {"fingerprint", gpu.fingerprint}, {"families", f}, {"cublas", toJson(cublas)}});
        continue;
      }
      fmt::print("{} ({}): |predicted/measured - 1| on held-out problems\n", gpu.spec.name, gpu.fingerprint.substr(0, 12));
      fmt::print("  {:<16} {:>7} {:>10} {:>10}  {}\n", "family", "rows", "median", "worst", "worst at");
      for (const auto& [name, e] : families) printRow(name, e);
      printRow("cublas", cublas);
    }
    if (json) std::cout << out.dump(2) << "\n";
  } catch (const std::exception& e) {
    fmt::print(stderr, "model_error: {}\n", e.what());
    return 1;
  }
  return 0;
}
