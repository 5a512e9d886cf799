// WorkloadSummary: gemm_bench's workload mode (`--shapes FILE`) — per shape cuBLAS, sgemm() and
// their ratio, then the geometric mean of the ratios, plain and weighted by the file's weights,
// and the worst shape: the figures a user compares before trusting tuned kernels with a workload.
#pragma once

#include <string>
#include <vector>

#include "BenchReport.hpp"
#include "ShapeFile.hpp"

namespace gemmtune::bench {

// `results` in the order of `workload`; shapes without both columns timed are listed as "-".
std::string formatWorkload(const std::vector<WorkloadShape>& workload, const std::vector<SizeResult>& results);

}  // namespace gemmtune::bench
