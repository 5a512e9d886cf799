// gemm_bench's workload summary: per-shape ratios, plain and weighted geometric means, the worst
// shape, and shapes left untimed. CPU only: the measurements are given.
// Run: ctest -R "WorkloadSummary|BenchReport"
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "BenchReport.hpp"
#include "WorkloadSummary.hpp"

using namespace gemmtune;
using namespace gemmtune::bench;

namespace {

SizeResult timed(GemmShape s, double cublasMs, double sgemmMs, double oursMs = 0) {
  SizeResult r{s, {}};
  r.rows.push_back({Kind::cublas, "cuBLAS", "", "cublas", "", cublasMs, 0, true, ""});
  r.rows.push_back({Kind::library, "sgemm()", "", "x", "exact", sgemmMs, 0, true, ""});
  if (oursMs > 0) r.rows.push_back({Kind::library_ours, "sgemm() ours", "", "y", "exact", oursMs, 0, true, ""});
  return r;
}

}  // namespace

TEST(WorkloadSummary, RatiosMeansAndTheWorstShape) {
  const std::vector<WorkloadShape> w{{{1024, 1024, 1024}, 1, 1}, {{27, 32, 3523}, 3, 2}};
  const std::vector<SizeResult> r{timed(w[0].shape, 1.0, 0.5), timed(w[1].shape, 1.0, 2.0)};
  const std::string out = formatWorkload(w, r);
  EXPECT_NE(out.find("2.00x"), std::string::npos) << out;  // 1024: sgemm() twice as fast
  EXPECT_NE(out.find("0.50x"), std::string::npos) << out;  // 27x32x3523: half as fast
  // Plain: sqrt(2 * 0.5) = 1; weighted: (2^1 * 0.5^3)^(1/4) = 2^(-1/2) = 0.71.
  EXPECT_NE(out.find("geometric mean sgemm()/cuBLAS 1.00x (0.71x weighted) over 2 shape(s); M or N <= 64: 0.50x over 1; "
                     "worst 27x32x3523 at 0.50x; 1 below 0.85x"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("geometric mean ours"), std::string::npos) << out;  // no such column timed
}

TEST(WorkloadSummary, OurKernelsOnlyHaveTheirOwnLine) {
  const std::vector<WorkloadShape> w{{{1024, 1024, 1024}, 1, 1}, {{4096, 16, 4096}, 1, 2}};
  const std::vector<SizeResult> r{timed(w[0].shape, 1.0, 1.0, 0.8), timed(w[1].shape, 1.0, 1.0, 1.25)};
  const std::string out = formatWorkload(w, r);
  EXPECT_NE(out.find("geometric mean sgemm()/cuBLAS 1.00x (1.00x weighted) over 2 shape(s); M or N <= 64: 1.00x over 1; "
                     "worst 1024 at 1.00x; 0 below 0.85x"),
            std::string::npos)
      << out;
  // ours: 1.25 and 0.8 -> geometric mean 1; the skinny one 0.80x, below the floor.
  EXPECT_NE(out.find("geometric mean ours/cuBLAS 1.00x (1.00x weighted) over 2 shape(s); M or N <= 64: 0.80x over 1; "
                     "worst 4096x16x4096 at 0.80x; 1 below 0.85x"),
            std::string::npos)
      << out;
}

TEST(WorkloadSummary, UntimedShapesAreShownAndLeftOutOfTheMean) {
  const std::vector<WorkloadShape> w{{{64, 64, 64}, 1, 1}, {{128, 128, 128}, 1, 2}};
  SizeResult untimed{w[0].shape, {}};
  const std::string out = formatWorkload(w, {untimed, timed(w[1].shape, 1.0, 1.25)});
  EXPECT_NE(out.find("over 1 shape(s); M or N <= 64: - over 0; worst 128 at 0.80x"), std::string::npos) << out;
  EXPECT_EQ(formatWorkload({w[0]}, {untimed}).find("geometric mean"), std::string::npos);
}

namespace {

FaithfulVerdict verdict(double maxRelative, double cublasMax) {
  FaithfulVerdict v;
  for (const char* set : kFaithfulSets) v.sets.push_back({set, {maxRelative, 2 * maxRelative}, {cublasMax, 2 * cublasMax}});
  v.ok = maxRelative <= cublasMax;
  if (!v.ok) v.detail = "faithful, uniform: above";
  return v;
}

}  // namespace

// gemm_bench --precision faithful: the error table per size (both measures per set, within cuBLAS
// or not), a tensor-core column above cuBLAS's error flagged in the speed table, and the CSV's
// error columns (empty for a column not judged).
TEST(BenchReport, FaithfulErrorsInTheTablesAndTheCsv) {
  SizeResult r = timed({2048, 2048, 2048}, 1.0, 0.7);
  r.rows[0].faithful = verdict(3.1e-7, 3.1e-7);
  r.rows[1].precision = PrecisionClass::faithful;
  r.rows[1].faithful = verdict(8.5e-8, 3.1e-7);
  Measured bad = r.rows[1];
  bad.column = "tf32x3 tuned", bad.kind = Kind::tuned, bad.faithful = verdict(9e-7, 3.1e-7);
  Measured strict = r.rows[1];
  strict.column = "warptile tuned", strict.kind = Kind::tuned, strict.precision = PrecisionClass::strict;
  strict.faithful = verdict(9e-7, 3.1e-7);
  r.rows.push_back(bad);
  r.rows.push_back(strict);
  EXPECT_FALSE(failsFaithful(r.rows[1]));
  EXPECT_TRUE(failsFaithful(bad));
  EXPECT_FALSE(failsFaithful(strict));  // a strict kernel owes no error bound: reported, never failed

  const std::string errors = formatErrors({r});
  EXPECT_NE(errors.find("uniform             normal              wide exponents      ≤ cuBLAS"), std::string::npos)
      << errors;
  EXPECT_NE(errors.find("sgemm()            8.5e-08   1.7e-07   8.5e-08   1.7e-07   8.5e-08   1.7e-07   yes"),
            std::string::npos)
      << errors;
  EXPECT_NE(errors.find("tf32x3 tuned       9.0e-07   1.8e-06"), std::string::npos) << errors;
  EXPECT_NE(errors.find("no (faithful class: FAIL)"), std::string::npos) << errors;
  EXPECT_NE(errors.find("1.8e-06   no\n"), std::string::npos) << errors;  // the strict column
  const std::string table = formatTable("GPU", {r}, PrecisionClass::faithful);
  EXPECT_NE(table.find("ERROR  error above cuBLAS SGEMM's"), std::string::npos) << table;
  EXPECT_EQ(formatErrors({timed({64, 64, 64}, 1.0, 1.0)}), "");  // a strict run prints no error table

  const std::filesystem::path csv = std::filesystem::temp_directory_path() / "bench_report_test.csv";
  writeCsv(csv, "GPU", {r});
  std::stringstream text;
  text << std::ifstream(csv).rdbuf();
  std::filesystem::remove(csv);
  EXPECT_NE(text.str().find(",err_uniform_max,err_uniform_f,err_normal_max,err_normal_f,err_wide_exponents_max,"
                            "err_wide_exponents_f,err_within_cublas\n"),
            std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find(",8.500e-08,1.700e-07,8.500e-08,1.700e-07,8.500e-08,1.700e-07,1\n"), std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find(",9.000e-07,1.800e-06,9.000e-07,1.800e-06,9.000e-07,1.800e-06,0\n"), std::string::npos)
      << text.str();
}
