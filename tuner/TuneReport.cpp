#include "TuneReport.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "BasisShapes.hpp"

namespace gemmtune {

namespace {

double tflops(const GemmShape& s, double ms) { return ms > 0 ? s.flops() / (ms * 1e-3) / 1e12 : 0; }

// "NVIDIA H200" or "2× NVIDIA H200 (GPUs 0, 1)"; busy is per GPU.
std::string gpuLabel(const GpuOutcome& g) {
  if (g.deviceIndices.size() < 2) return g.gpuName;
  std::string ids;
  for (int d : g.deviceIndices) {
    ids += fmt::format("{}{}", ids.empty() ? "" : ", ", d);
    if (std::find(g.lostDevices.begin(), g.lostDevices.end(), d) != g.lostDevices.end()) ids += " lost";
  }
  return fmt::format("{}x {} (GPUs {})", g.deviceIndices.size(), g.gpuName, ids);
}

double busyPercent(const GpuOutcome& g) {
  const double gpus = static_cast<double>(std::max<size_t>(1, g.deviceIndices.size()));
  return g.wallSeconds > 0 ? 100 * g.gpuBusySeconds / gpus / g.wallSeconds : 0;
}

std::string counts(const FamilyOutcome& f) {
  std::string out;
  for (const auto& [status, n] : f.statusCounts) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", n, status);
  return out;
}

std::string sizeTable(const SizeOutcome& s) {
  std::string out = fmt::format("\nsize {}  cuBLAS {}  ({} timed, {} resumed)\n", s.shape.str(),
                                s.cublasMs ? fmt::format("{:.1f} TFLOP/s", tflops(s.shape, *s.cublasMs)) : "n/a",
                                s.timed, s.resumed);
  // Columns as wide as their longest entry: instance names grow with a family's parameters.
  size_t familyWidth = 6, bestWidth = 4;
  for (const auto& f : s.families) {
    familyWidth = std::max(familyWidth, f.family.size());
    bestWidth = std::max(bestWidth, f.bestInstance.size() + 1);
  }
  out += fmt::format("  {:<{}} {:<{}} {:>8} {:>9} {:>11}  {}\n", "family", familyWidth, "best", bestWidth, "TFLOP/s",
                     "% cuBLAS", "vs classic", "candidates");
  for (const auto& f : s.families) {
    std::string best = f.bestInstance.empty() ? "(none ok)" : f.bestInstance + (f.bestPartial ? "*" : "");
    std::string tf = f.bestInstance.empty() ? "-" : fmt::format("{:.1f}", tflops(s.shape, f.bestMs));
    std::string pct = (s.cublasMs && !f.bestInstance.empty()) ? fmt::format("{:.0f} %", 100 * *s.cublasMs / f.bestMs) : "-";
    std::string vs = (f.classicMs && !f.bestInstance.empty()) ? fmt::format("{:.2f}x", *f.classicMs / f.bestMs) : "-";
    out += fmt::format("  {:<{}} {:<{}} {:>8} {:>9} {:>11}  {}\n", f.family, familyWidth, best, bestWidth, tf, pct, vs,
                       counts(f));
  }
  return out;
}

// One line a basis shape: its regime, cuBLAS, then each family's best, fastest first.
std::string basisLine(const SizeOutcome& s) {
  std::vector<const FamilyOutcome*> ok;
  for (const auto& f : s.families)
    if (!f.bestInstance.empty()) ok.push_back(&f);
  std::sort(ok.begin(), ok.end(), [](const FamilyOutcome* a, const FamilyOutcome* b) { return a->bestMs < b->bestMs; });
  std::string families;
  for (const FamilyOutcome* f : ok) {
    families += fmt::format("{}{} {:.1f}", families.empty() ? "" : ", ", f->family, tflops(s.shape, f->bestMs));
    if (s.cublasMs) families += fmt::format(" ({:.0f} %)", 100 * *s.cublasMs / f->bestMs);
  }
  return fmt::format("  {:<18} {:<20} cuBLAS {:>5}  {}\n", s.shape.str(), basisRegimeOf(s.shape),
                     s.cublasMs ? fmt::format("{:.1f}", tflops(s.shape, *s.cublasMs)) : "-",
                     families.empty() ? "nothing timed" : families);
}

std::string basisTable(const BasisOutcome& b) {
  int timed = 0, resumed = 0;
  for (const auto& s : b.shapes) {
    timed += s.timed;
    resumed += s.resumed;
  }
  std::string out = fmt::format(
      "\nbasis: {} shape(s) in {:.1f} s, {:.0f} % of the run (its share: {:.1f} s); {} timed, {} resumed; "
      "TFLOP/s (% cuBLAS) per family\n",
      b.shapes.size(), b.seconds, 100 * b.runShare, b.budgetSeconds, timed, resumed);
  for (const auto& s : b.shapes) {
    const bool anyBest = std::any_of(s.families.begin(), s.families.end(),
                                     [](const FamilyOutcome& f) { return !f.bestInstance.empty(); });
    const bool skipped = std::find(b.skipped.begin(), b.skipped.end(), s.shape.str()) != b.skipped.end();
    if (anyBest || !skipped) out += basisLine(s);  // a shape with nothing to show is named below
  }
  if (!b.skipped.empty())
    out += fmt::format("  not timed, the basis's time was spent before them (pruned:budget): {}\n",
                       fmt::join(b.skipped, ", "));
  return out;
}

nlohmann::json sizeJson(const SizeOutcome& s) {
  nlohmann::json fams = nlohmann::json::array();
  for (const auto& f : s.families) {
    nlohmann::json jf = {{"family", f.family}, {"classic", f.classicInstance}, {"status_counts", f.statusCounts}};
    if (!f.bestInstance.empty())
      jf["best"] = {{"instance", f.bestInstance}, {"median_ms", f.bestMs}, {"tflops", tflops(s.shape, f.bestMs)},
                    {"partial", f.bestPartial}};
    if (f.classicMs) jf["classic_median_ms"] = *f.classicMs;
    fams.push_back(jf);
  }
  nlohmann::json js = {{"m", s.shape.M},         {"n", s.shape.N},  {"k", s.shape.K},
                       {"layout", s.shape.layout.text()}, {"batch", s.shape.batch}, {"families", fams},
                       {"timed", s.timed},         {"resumed", s.resumed}};
  if (s.cublasMs) js["cublas"] = {{"median_ms", *s.cublasMs}, {"tflops", tflops(s.shape, *s.cublasMs)}};
  if (!s.bestInstance.empty()) js["best"] = {{"instance", s.bestInstance}, {"median_ms", s.bestMs}};
  return js;
}

nlohmann::json basisJson(const BasisOutcome& b) {
  nlohmann::json shapes = nlohmann::json::array();
  for (const auto& s : b.shapes) {
    nlohmann::json js = sizeJson(s);
    js["regime"] = basisRegimeOf(s.shape);
    shapes.push_back(js);
  }
  return {{"shapes", shapes}, {"seconds", b.seconds}, {"budget_seconds", b.budgetSeconds},
          {"run_share", b.runShare}, {"skipped", b.skipped}};
}

}  // namespace

std::string formatTuneTable(const std::vector<GpuOutcome>& outcomes) {
  std::string out;
  for (const auto& g : outcomes) {
    out += fmt::format("{}: {} size(s) in {:.1f} s wall, GPU busy {:.0f} %, {} worker restart(s){}\n", gpuLabel(g),
                       g.sizes.size(), g.wallSeconds, busyPercent(g), g.workerRestarts,
                       g.interrupted ? " (interrupted: run again to resume)" : "");
    for (const auto& s : g.sizes) out += sizeTable(s);
    if (g.basis) out += basisTable(*g.basis);
    out += "\n";
  }
  return out;
}

nlohmann::json tuneJson(const std::vector<GpuOutcome>& outcomes) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& g : outcomes) {
    nlohmann::json sizes = nlohmann::json::array();
    for (const auto& s : g.sizes) sizes.push_back(sizeJson(s));
    nlohmann::json jg = {{"gpu", g.gpuName}, {"devices", g.deviceIndices}, {"lost_devices", g.lostDevices},
                         {"sizes", sizes}, {"wall_seconds", g.wallSeconds},
                         {"gpu_busy_seconds", g.gpuBusySeconds}, {"worker_restarts", g.workerRestarts},
                         {"interrupted", g.interrupted}};
    if (g.basis) jg["basis"] = basisJson(*g.basis);
    gpus.push_back(jg);
  }
  return {{"gpus", gpus}};
}

}  // namespace gemmtune
