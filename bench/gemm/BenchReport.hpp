// BenchReport: gemm_bench's results as a table on stdout and as CSV. Ratios are speed ratios
// measured in the same run: > 1 means faster than the reference column.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "Contenders.hpp"
#include "SizeSpec.hpp"

namespace gemmtune::bench {

struct Measured {
  Kind kind = Kind::cublas;
  std::string column, family, instance, match;
  double medianMs = 0;  // median over the interleaved rounds; 0 when not timed
  double spread = 0;    // (max - min) / median over the rounds
  bool verified = false;
  std::string verifyDetail;
};

struct SizeResult {
  GemmShape shape;
  std::vector<Measured> rows;
};

double tflops(const GemmShape& s, double ms);
// reference median / this median, when both were timed.
std::optional<double> speedup(const Measured& row, const Measured* reference);
const Measured* findColumn(const SizeResult& r, Kind kind, const std::string& family = {});

std::string formatTable(const std::string& gpuName, const std::vector<SizeResult>& results);
// Throws std::runtime_error when the file cannot be written.
void writeCsv(const std::filesystem::path& path, const std::string& gpuName, const std::vector<SizeResult>& results);

}  // namespace gemmtune::bench
