// The end-of-run table and JSON of `gemmtune tune`, and the progress line's text.
#include <gtest/gtest.h>

#include "ProgressLine.hpp"
#include "TuneReport.hpp"

using namespace gemmtune;

namespace {
GpuOutcome sample() {
  GpuOutcome g;
  g.gpuName = "NVIDIA H100 80GB HBM3";
  g.wallSeconds = 100;
  g.gpuBusySeconds = 80;
  SizeOutcome s;
  s.shape = {4096, 4096, 4096};
  s.cublasMs = 2.7;  // ~50.9 TFLOP/s
  FamilyOutcome f;
  f.family = "blocktile1d";
  f.bestInstance = "blocktile1d_bm128_bn64_bk8_tm8";
  f.bestMs = 6.0;
  f.classicInstance = "blocktile1d_bm64_bn64_bk8_tm8";
  f.classicMs = 7.5;
  f.statusCounts = {{"ok", 40}, {"rejected", 300}, {"pruned", 100}};
  s.families.push_back(f);
  FamilyOutcome none;
  none.family = "smem";
  none.statusCounts = {{"wrong_result", 4}};
  s.families.push_back(none);
  g.sizes.push_back(s);
  return g;
}
}  // namespace

TEST(TuneReport, TableShowsBestRatiosAndCounts) {
  std::string t = formatTuneTable({sample()});
  EXPECT_NE(t.find("GPU busy 80 %"), std::string::npos) << t;
  EXPECT_NE(t.find("size 4096  cuBLAS 50.9 TFLOP/s"), std::string::npos) << t;
  EXPECT_NE(t.find("blocktile1d_bm128_bn64_bk8_tm8"), std::string::npos);
  EXPECT_NE(t.find("22.9"), std::string::npos) << t;     // 2*4096^3 / 6 ms
  EXPECT_NE(t.find("45 %"), std::string::npos) << t;     // 2.7 / 6.0
  EXPECT_NE(t.find("1.25x"), std::string::npos) << t;    // 7.5 / 6.0
  EXPECT_NE(t.find("40 ok, 100 pruned, 300 rejected"), std::string::npos) << t;
  EXPECT_NE(t.find("(none ok)"), std::string::npos);
}

TEST(TuneReport, JsonCarriesTheSameNumbers) {
  auto j = tuneJson({sample()});
  const auto& s = j["gpus"][0]["sizes"][0];
  EXPECT_EQ(s["m"], 4096);
  EXPECT_NEAR(s["cublas"]["tflops"].get<double>(), 50.9, 0.05);
  EXPECT_EQ(s["families"][0]["best"]["instance"], "blocktile1d_bm128_bn64_bk8_tm8");
  EXPECT_EQ(s["families"][0]["status_counts"]["rejected"], 300);
  EXPECT_FALSE(s["families"][1].contains("best"));
}

TEST(ProgressLine, FormatsCountsBestAndEta) {
  ProgressState p;
  p.size = "2048";
  p.done = 10;
  p.total = 40;
  p.rejected = 3;
  p.failed = 1;
  p.bestTflops = 21.04;
  p.bestInstance = "blocktile1d_bm64_bn64_bk8_tm8";
  p.etaSeconds = 75;
  EXPECT_EQ(ProgressLine::format(p),
            "size 2048: 10/40 candidates, 3 rejected, 0 pruned, 1 failed, best 21.0 TFLOP/s "
            "blocktile1d_bm64_bn64_bk8_tm8, ETA 1:15");
}
