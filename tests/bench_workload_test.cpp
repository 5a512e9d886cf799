// gemm_bench's workload summary: per-shape ratios, plain and weighted geometric means, the worst
// shape, and shapes left untimed. CPU only: the measurements are given.
// Run: ctest -R WorkloadSummary
#include <gtest/gtest.h>

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
