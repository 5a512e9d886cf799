#include "WorkloadSummary.hpp"

#include <fmt/format.h>

#include <cmath>
#include <optional>

namespace gemmtune::bench {

namespace {

// A shape is skinny when M or N is at most this: its C has few tiles and it is memory-bound.
constexpr long long kSkinny = 64;
// Issue 28's floor: no shape of a workload below this share of cuBLAS.
constexpr double kFloor = 0.85;

// The ratios cuBLAS / column of one library column over the workload.
struct RatioStats {
  double logSum = 0, weightedLogSum = 0, weightSum = 0, skinnyLogSum = 0;
  int counted = 0, skinny = 0, belowFloor = 0;
  const WorkloadShape* worst = nullptr;
  double worstRatio = 0;

  void add(const WorkloadShape& w, double ratio) {
    logSum += std::log(ratio);
    weightedLogSum += w.weight * std::log(ratio);
    weightSum += w.weight;
    ++counted;
    if (w.shape.M <= kSkinny || w.shape.N <= kSkinny) skinnyLogSum += std::log(ratio), ++skinny;
    if (ratio < kFloor) ++belowFloor;
    if (!worst || ratio < worstRatio) worst = &w, worstRatio = ratio;
  }
  std::string line(const char* column) const {
    if (counted == 0) return fmt::format("  no shape had both cuBLAS and {} timed\n", column);
    return fmt::format("  geometric mean {}/cuBLAS {:.2f}x ({:.2f}x weighted) over {} shape(s); M or N <= {}: {} over {}; "
                       "worst {} at {:.2f}x; {} below {:.2f}x\n",
                       column, std::exp(logSum / counted), std::exp(weightedLogSum / weightSum), counted, kSkinny,
                       skinny ? fmt::format("{:.2f}x", std::exp(skinnyLogSum / skinny)) : std::string("-"), skinny,
                       worst->shape.str(), worstRatio, belowFloor, kFloor);
  }
};

std::optional<double> ratioOf(const Measured* blas, const Measured* column) {
  if (!blas || !column || !(blas->medianMs > 0) || !(column->medianMs > 0)) return std::nullopt;
  return blas->medianMs / column->medianMs;
}

std::string ratioCell(std::optional<double> ratio) { return ratio ? fmt::format("{:.2f}x", *ratio) : "-"; }

}  // namespace

std::string formatWorkload(const std::vector<WorkloadShape>& workload, const std::vector<SizeResult>& results) {
  std::string out = fmt::format("\nworkload: {} shape(s)\n  {:<18} {:>7} {:>12} {:>9} {:>9}  {}\n", workload.size(),
                                "shape", "weight", "cuBLAS TF/s", "sgemm()", "ours", "sgemm() runs");
  RatioStats library, ours;
  for (size_t i = 0; i < workload.size() && i < results.size(); ++i) {
    const WorkloadShape& w = workload[i];
    const Measured* blas = findColumn(results[i], Kind::cublas);
    const Measured* lib = findColumn(results[i], Kind::library);
    const std::optional<double> libRatio = ratioOf(blas, lib), oursRatio = ratioOf(blas, findColumn(results[i], Kind::library_ours));
    if (libRatio) library.add(w, *libRatio);
    if (oursRatio) ours.add(w, *oursRatio);
    out += fmt::format("  {:<18} {:>7.3g} {:>12} {:>9} {:>9}  {}\n", w.shape.str(), w.weight,
                       blas && blas->medianMs > 0 ? fmt::format("{:.1f}", tflops(w.shape, blas->medianMs)) : "-",
                       ratioCell(libRatio), ratioCell(oursRatio),
                       lib ? fmt::format("{} ({})", lib->instance, lib->match) : "-");
  }
  out += library.line("sgemm()");
  if (ours.counted > 0) out += ours.line("ours");
  return out;
}

}  // namespace gemmtune::bench
