// BenchReport: gemm_bench's results as a table on stdout and as CSV. Ratios are speed ratios
// measured in the same run: > 1 means faster than the reference column. Under `--precision
// faithful` also each column's error against an FP64 product beside cuBLAS SGEMM's on the same
// data (worker/FaithfulCheck.hpp): the other half of what a tensor-core column trades.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "Contenders.hpp"
#include "SizeSpec.hpp"
#include "gemmtune/Precision.hpp"
#include "worker/FaithfulCheck.hpp"

namespace gemmtune::bench {

struct Measured {
  Kind kind = Kind::cublas;
  std::string column, family, instance, match;
  double medianMs = 0;  // median over the interleaved rounds; 0 when not timed
  double spread = 0;    // (max - min) / median over the rounds
  bool verified = false;
  std::string verifyDetail;
  PrecisionClass precision = PrecisionClass::strict;  // of what the column runs (Contender::precision)
  // Faithful runs, verified columns: the error figures per data set and whether they stay within
  // cuBLAS's; empty under strict or where the size's data sets could not be made.
  std::optional<FaithfulVerdict> faithful;
};

// A column of the faithful class whose error is above cuBLAS's: timed and shown, but a failure
// (exit 1) like a wrong result, since the class promises FP32 accuracy. A strict column above
// cuBLAS is only reported: nothing promised it more than correct FP32 FMA arithmetic.
bool failsFaithful(const Measured& m);

struct SizeResult {
  GemmShape shape;
  std::vector<Measured> rows;
};

double tflops(const GemmShape& s, double ms);
// reference median / this median, when both were timed.
std::optional<double> speedup(const Measured& row, const Measured* reference);
const Measured* findColumn(const SizeResult& r, Kind kind, const std::string& family = {});

// The speed table; the ratio columns are those of the families `precision` admits.
std::string formatTable(const std::string& gpuName, const std::vector<SizeResult>& results, PrecisionClass precision);
// Per size, every judged column's error figures per data set and "≤ cuBLAS"; empty when none was judged.
std::string formatErrors(const std::vector<SizeResult>& results);
// The error figures are extra columns, empty where not judged (every row under strict), so the
// header is the same whatever the precision. Throws std::runtime_error when the file cannot be written.
void writeCsv(const std::filesystem::path& path, const std::string& gpuName, const std::vector<SizeResult>& results);

}  // namespace gemmtune::bench
