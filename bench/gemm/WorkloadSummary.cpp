#include "WorkloadSummary.hpp"

#include <fmt/format.h>

#include <cmath>

namespace gemmtune::bench {

std::string formatWorkload(const std::vector<WorkloadShape>& workload, const std::vector<SizeResult>& results) {
  std::string out = fmt::format("\nworkload: {} shape(s)\n  {:<18} {:>7} {:>13} {:>13} {:>9}\n", workload.size(), "shape",
                                "weight", "cuBLAS TF/s", "sgemm() TF/s", "ratio");
  double logSum = 0, weightedLogSum = 0, weightSum = 0;
  int counted = 0;
  const WorkloadShape* worst = nullptr;
  double worstRatio = 0;
  for (size_t i = 0; i < workload.size() && i < results.size(); ++i) {
    const WorkloadShape& w = workload[i];
    const Measured* blas = findColumn(results[i], Kind::cublas);
    const Measured* lib = findColumn(results[i], Kind::library);
    const bool timed = blas && lib && blas->medianMs > 0 && lib->medianMs > 0;
    if (!timed) {
      out += fmt::format("  {:<18} {:>7.3g} {:>13} {:>13} {:>9}\n", w.shape.str(), w.weight, "-", "-", "-");
      continue;
    }
    const double ratio = blas->medianMs / lib->medianMs;
    out += fmt::format("  {:<18} {:>7.3g} {:>13.1f} {:>13.1f} {:>8.2f}x\n", w.shape.str(), w.weight,
                       tflops(w.shape, blas->medianMs), tflops(w.shape, lib->medianMs), ratio);
    logSum += std::log(ratio);
    weightedLogSum += w.weight * std::log(ratio);
    weightSum += w.weight;
    ++counted;
    if (!worst || ratio < worstRatio) worst = &w, worstRatio = ratio;
  }
  if (counted == 0) return out + "  no shape had both cuBLAS and sgemm() timed\n";
  out += fmt::format("  geometric mean sgemm()/cuBLAS {:.2f}x ({:.2f}x weighted) over {} shape(s); worst {} at {:.2f}x\n",
                     std::exp(logSum / counted), std::exp(weightedLogSum / weightSum), counted, worst->shape.str(),
                     worstRatio);
  return out;
}

}  // namespace gemmtune::bench
