// The GPU worker on a real GPU (label gpu; skipped without a driver): verification of real
// templates at odd sizes and in the padded layout, timing sanity against cuBLAS, early stop, and
// the fault family — every fault gets its status and a healthy kernel measures ok right after each
// one, on a plain problem and on a transposed, batched one. tests/layouts_gpu_test.cpp runs the
// real templates in every layout and batch form.
#include <gtest/gtest.h>

#include <string>

#include "Compiler.hpp"
#include "CudaDriver.hpp"
#include "FamilyRegistry.hpp"
#include "WorkerClient.hpp"
#include "fault_family.hpp"
#include "worker/ProblemLayout.hpp"
#include "worker_test_support.hpp"
#include "ExitCodes.hpp"

using namespace gemmtune;
using gemmtune::test::faultFamily;
using gemmtune::test::quickTiming;
using gemmtune::test::requestFor;

namespace {

bool padded(const CheckLayout& l) { return l.problem.ldc != l.problem.n; }

class WorkerGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!CudaDriver::available()) GTEST_SKIP() << "no CUDA driver/GPU";
    client_ = std::make_unique<WorkerClient>(0, GEMMTUNE_CLI);
    arch_ = client_->info().arch;
  }

  // A built-in template instance, compiled for this GPU.
  CandidateRequest builtin(const std::string& name, const Problem& p, bool time) {
    Config c = FamilyRegistry::builtin().parseName(name);
    CompileResult r = compiler_.compile(c, arch_);
    EXPECT_TRUE(r.ok) << r.log;
    CandidateRequest req = requestFor(c, r, p, quickTiming());
    req.time = time;
    return req;
  }

  CandidateRequest fault(int mode, const Problem& p) {
    static const Family family = faultFamily();
    Config c{&family, {mode}, true, p.layout};
    CompileResult r = test::compileFault(c, arch_);
    EXPECT_TRUE(r.ok) << r.log;
    return requestFor(c, r, p, quickTiming());
  }

  std::unique_ptr<WorkerClient> client_;
  std::string arch_;
  Compiler compiler_{CompilerOptions{{}, {}, 1}};
};

}  // namespace

TEST_F(WorkerGpu, TemplatesPassBothVerificationSetsAtOddSizes) {
  for (Problem p : {Problem{1000, 1000, 1000}, Problem{17, 33, 7}, Problem{257, 129, 65, 2.0}, Problem{65, 70, 1, 2.0}}) {
    client_->setProblem(p);
    // Guarded forms of every family; at 17x33x7 and 257x129x65 their scalar (non-float4) paths run.
    for (const char* name : {"smem_bs16_guarded", "blocktile1d_bm64_bn64_bk8_tm8_guarded",
                             "blocktile2d_bm128_bn128_bk8_tm8_tn8_guarded",
                             "warptile_bm128_bn128_bk8_wm64_wn32_wni2_tm4_tn4_t256_guarded",
                             "warptile_bm64_bn64_bk16_wm32_wn32_wni1_tm8_tn4_t128_guarded",
                             // warppipe: 2 and 4 stages; copies past M, N and K fill zeros.
                             "warppipe_bm128_bn128_bk8_wm64_wn32_wni2_tm4_tn4_t256_st2_guarded",
                             "warppipe_bm64_bn64_bk16_wm32_wn32_wni1_tm8_tn4_t128_st4_guarded",
                             // One form for every shape; swizzle 4 takes groups of 4 tile columns
                             // at 1000 and of 2 at 257x129x65, which the plan's grid must follow.
                             "cutlass_bm128_bn128_bk8_wm64_wn32_st3_sw1_sk1", "cutlass_bm64_bn128_bk8_wm32_wn64_st5_sw4_sk1",
                             // Serial split-K: 3 slices of K not divisible by 3, 8 slices where
                             // K < 8 (empty slices add zero) and K = 1; beta 2 applied once.
                             "cutlass_bm128_bn128_bk8_wm64_wn32_st3_sw1_sk3", "cutlass_bm64_bn64_bk8_wm32_wn32_st3_sw4_sk8",
                             // thin: one slice; 3, 8 and 16 slices (partial tiles added in order
                             // by the last block of each tile); 2 and 4 stages; a GEMV-like 8×128
                             // and a 128×8 tile.
                             "thin_bm64_bn16_bk32_tm4_tn4_st4_sk1_guarded", "thin_bm64_bn16_bk32_tm4_tn4_st2_sk3_guarded",
                             "thin_bm8_bn128_bk32_tm1_tn4_st4_sk8_guarded", "thin_bm128_bn8_bk32_tm8_tn1_st4_sk16_guarded",
                             // streamk: 4 and 8 warps, swizzle 1 and 4; at 1000 a tile's k steps
                             // are split between blocks, at 257x129x65 each block holds one step
                             // (a tile summed from 9 blocks), at K = 1 and 7 one block holds all.
                             "streamk_bm128_bn128_bk8_wm64_wn64_st3_sw4", "streamk_bm64_bn256_bk8_wm32_wn64_st3_sw1"}) {
      auto r = client_->run(builtin(name, p, false), 60);
      EXPECT_EQ(r.status, "ok") << name << " at " << p.M << "x" << p.N << "x" << p.K << ": " << r.detail;
      EXPECT_LE(r.maxError, 1.0) << name;
    }
    if (std::stoi(arch_.substr(3)) < 90) continue;  // clusters: sm_90 on
    // clusterk: 4 and 8 warps; 2 slices (at K = 1 and 7 one of them has no k tile and adds zero), 4
    // slices of 32-row bands; beta 2 applied once, by the block that sums the band.
    for (const char* name : {"clusterk_bm128_bn128_bk8_wm64_wn64_st3_sw4_sk2", "clusterk_bm256_bn128_bk8_wm64_wn64_st3_sw4_sk2",
                             "clusterk_bm128_bn128_bk8_wm32_wn64_st4_sw4_sk4"}) {
      auto r = client_->run(builtin(name, p, false), 60);
      EXPECT_EQ(r.status, "ok") << name << " at " << p.M << "x" << p.N << "x" << p.K << ": " << r.detail;
      EXPECT_LE(r.maxError, 1.0) << name;
    }
  }
  EXPECT_EQ(client_->restarts(), 0);
}

TEST_F(WorkerGpu, Float4FormsRunThePaddedLayoutToo) {
  // The classic warp-tiling configurations, unguarded: float4 loads and stores (warptile), 16-byte
  // cp.async copies (warppipe). The padded layout pads by multiples of 4 floats and offsets by 16
  // bytes so that its plan stays runnable.
  for (const char* family : {"warptile", "warppipe"}) {
    const Family* f = FamilyRegistry::builtin().find(family);
    ASSERT_NE(f, nullptr);
    Config c = *FamilyRegistry::classic(*f);
    c.guarded = false;
    Problem p{512, 512, 512};
    client_->setProblem(p);
    CompileResult compiled = compiler_.compile(c, arch_);
    ASSERT_TRUE(compiled.ok) << compiled.log;
    CandidateRequest req = requestFor(c, compiled, p, quickTiming());
    req.time = false;
    for (const CheckLayout& l : req.checkLayouts) EXPECT_TRUE(l.plan.runnable()) << l.problem.text() << ": " << l.plan.refusal;
    auto r = client_->run(req, 60);
    EXPECT_EQ(r.status, "ok") << family << ": " << r.detail;
    EXPECT_EQ(r.detail, "") << family << ": no layout may be skipped";
  }
}

TEST_F(WorkerGpu, ARefusedLayoutIsSkippedAndSaidNeverFailed) {
  Problem p{64, 64, 64};
  client_->setProblem(p);
  CandidateRequest req = builtin("smem_bs16", p, false);
  for (CheckLayout& l : req.checkLayouts)
    if (padded(l)) l.plan = LaunchPlan::refused("test refusal");
  auto r = client_->run(req, 30);
  EXPECT_EQ(r.status, "ok") << r.detail;
  EXPECT_NE(r.detail.find("padded layout not checked: test refusal"), std::string::npos) << r.detail;

  // Nothing verified is no pass.
  for (CheckLayout& l : req.checkLayouts) l.plan = LaunchPlan::refused("test refusal");
  EXPECT_EQ(client_->run(req, 30).status, "launch_error");
  EXPECT_EQ(client_->restarts(), 0);
}

TEST_F(WorkerGpu, LargeProblemVerifiesQuickly) {
  Problem p{8192, 8192, 8192};
  client_->setProblem(p);
  CandidateRequest req = builtin("blocktile1d_bm64_bn64_bk8_tm8", p, false);
  auto start = std::chrono::steady_clock::now();
  auto r = client_->run(req, 120);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.status, "ok") << r.detail;
  // Six launches (three checks, packed and padded) of ~65 ms plus the checks; the checks
  // themselves must not dominate.
  EXPECT_LT(s, 2.0);
}

TEST_F(WorkerGpu, TimingIsSaneAndCublasIsTheFasterBaseline) {
  Problem p{1024, 1024, 1024};
  client_->setProblem(p);
  auto tiled = client_->run(builtin("smem_bs32", p, true), 60);
  ASSERT_EQ(tiled.status, "ok") << tiled.detail;
  auto blas = client_->cublas(quickTiming(), 60);
  ASSERT_EQ(blas.status, "ok") << blas.detail;
  const double flops = 2.0 * 1024 * 1024 * 1024;
  for (const auto& r : {tiled, blas}) {
    EXPECT_GE(r.reps, 5);
    EXPECT_GT(r.minMs, 0);
    EXPECT_LE(r.minMs, r.medianMs);
    EXPECT_GE(r.spread, 0);
    EXPECT_LT(flops / (r.minMs * 1e-3), 200e12) << "faster than any FP32 SIMT peak: the timing is wrong";
    EXPECT_FALSE(r.partial);
  }
  EXPECT_LT(blas.medianMs, tiled.medianMs);

  TimingPolicy early = quickTiming();
  early.bestSoFarMs = blas.medianMs / 10;
  CandidateRequest req = builtin("smem_bs32", p, true);
  req.timing = early;
  auto stopped = client_->run(req, 60);
  EXPECT_EQ(stopped.status, "ok");
  EXPECT_TRUE(stopped.partial);
  EXPECT_EQ(stopped.reps, early.minReps);
}

TEST_F(WorkerGpu, ProblemTooLargeIsAUsageErrorAndTheWorkerStaysUsable) {
  try {
    client_->setProblem({200000, 200000, 200000});
    FAIL() << "expected the problem to be refused";
  } catch (const Error& e) {
    EXPECT_EQ(exitCodeOf(e), kExitUsage) << e.what();
  }
  Problem p{64, 64, 64};
  client_->setProblem(p);
  EXPECT_EQ(client_->run(builtin("smem_bs16", p, false), 30).status, "ok");
  EXPECT_EQ(client_->restarts(), 0);
}

TEST_F(WorkerGpu, OversizedBlockIsALaunchErrorWithoutRestart) {
  Problem p{64, 64, 64};
  client_->setProblem(p);
  CandidateRequest req = builtin("smem_bs16", p, false);
  req.plan.launches.at(0).block = {2048, 1, 1};
  for (CheckLayout& l : req.checkLayouts) l.plan.launches.at(0).block = {2048, 1, 1};
  auto r = client_->run(req, 30);
  EXPECT_EQ(r.status, "launch_error") << r.detail;
  EXPECT_EQ(client_->restarts(), 0);
}

TEST_F(WorkerGpu, EveryFaultGetsItsStatusAndAHealthyKernelStillMeasures) {
  Problem p{256, 256, 256};
  client_->setProblem(p);
  const CandidateRequest healthy = fault(0, p);
  const double deadline = 10;
  ASSERT_EQ(client_->run(healthy, deadline).status, "ok");

  int restarts = 0;
  for (const auto& c : test::faultExpectations()) {
    auto r = client_->run(fault(c.mode, p), deadline);
    EXPECT_TRUE(test::statusExpected(c, r.status)) << "mode " << c.mode << ": " << r.status << " " << r.detail;
    restarts += c.restartsWorker;
    if (r.status == "wrong_result") {
      EXPECT_FALSE(r.detail.empty());
      if (c.outsideC.empty()) {
        EXPECT_GT(r.maxError, 1.0) << "mode " << c.mode;
      } else {
        EXPECT_NE(r.detail.find("wrote outside C"), std::string::npos) << "mode " << c.mode << ": " << r.detail;
        EXPECT_NE(r.detail.find(c.outsideC), std::string::npos) << "mode " << c.mode << ": " << r.detail;
      }
    }
    auto after = client_->run(healthy, deadline);
    EXPECT_EQ(after.status, "ok") << "healthy kernel after mode " << c.mode << ": " << after.detail;
    EXPECT_GT(after.medianMs, 0);
  }
  EXPECT_EQ(client_->restarts(), restarts);  // three sticky faults and one timeout
}

// The faults that verification catches (not the sticky ones or the hang: those do not depend on the
// layout) on a transposed, batched problem: its checks run strided packed, strided padded (gaps
// between batches) and through pointer arrays, and also catch a kernel that ignores the batch.
TEST_F(WorkerGpu, VerificationFaultsAreCaughtTransposedAndBatched) {
  Problem p{96, 80, 72, 0.0, Layout{true, true}, 3};
  client_->setProblem(p);
  const CandidateRequest healthy = fault(0, p);
  const auto first = client_->run(healthy, 10);
  ASSERT_EQ(first.status, "ok") << first.detail;
  EXPECT_EQ(first.detail, "") << "no layout may be skipped";
  std::vector<test::FaultExpectation> cases = test::batchFaultExpectations();
  for (const auto& c : test::faultExpectations())
    if (!c.restartsWorker) cases.push_back(c);
  for (const auto& c : cases) {
    auto r = client_->run(fault(c.mode, p), 10);
    EXPECT_TRUE(test::statusExpected(c, r.status)) << "mode " << c.mode << ": " << r.status << " " << r.detail;
    if (c.outsideC.empty()) {
      EXPECT_GT(r.maxError, 1.0) << "mode " << c.mode;
    } else {
      EXPECT_NE(r.detail.find("wrote outside C"), std::string::npos) << "mode " << c.mode << ": " << r.detail;
      EXPECT_NE(r.detail.find(c.outsideC), std::string::npos) << "mode " << c.mode << ": " << r.detail;
    }
    EXPECT_NE(r.detail.find("(batch "), std::string::npos) << "mode " << c.mode << ": the detail names the batch: " << r.detail;
    if (c.mode == 13) {
      EXPECT_NE(r.detail.find("(batch 1)"), std::string::npos) << r.detail;
    }
    EXPECT_EQ(client_->run(healthy, 10).status, "ok") << "healthy kernel after mode " << c.mode;
  }
  EXPECT_EQ(client_->restarts(), 0);
}

// cuBLAS as a candidate: verified like a configuration (every check in every layout: packed,
// padded, and pointer arrays when batched) in each layout and batched, odd sizes included.
TEST_F(WorkerGpu, CublasPassesTheCandidatesVerificationInEveryLayout) {
  for (const char* layout : {"nn", "nt", "tn", "tt"})
    for (Problem p : {Problem{97, 130, 61, 2.0}, Problem{256, 128, 64, 0.0}}) {
      p.layout = *Layout::parse(layout);
      for (long long batch : {1LL, 3LL}) {
        p.batch = batch;
        client_->setProblem(p);
        auto r = client_->cublas(quickTiming(), 60, true);
        EXPECT_EQ(r.status, "ok") << p.shape().str() << ": " << r.detail;
        EXPECT_LE(r.maxError, 1.0) << p.shape().str();
        EXPECT_GT(r.medianMs, 0) << p.shape().str();
      }
    }
}
