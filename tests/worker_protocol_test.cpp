// Worker protocol and the worker's pure parts: wire round-trips, frame headers, frames over a
// pipe, the problem layout, timing statistics, and that the helper kernels compile with NVRTC
// (no GPU needed).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <limits>

#include "NvrtcCompiler.hpp"
#include "gemmtune/Errors.hpp"
#include "worker/HelperKernels.hpp"
#include "worker/ProblemLayout.hpp"
#include "worker/TimingStats.hpp"
#include "worker/WorkerWire.hpp"

using namespace gemmtune;
using nlohmann::json;

namespace {

json roundTrip(const json& message) {
  std::string frame = wire::encodeFrame(message);
  auto n = wire::payloadLength(reinterpret_cast<const unsigned char*>(frame.data()));
  EXPECT_TRUE(n.has_value());
  EXPECT_EQ(*n + wire::kHeaderBytes, frame.size());
  return wire::decodePayload(std::string_view(frame).substr(wire::kHeaderBytes));
}

}  // namespace

TEST(WorkerWire, CandidateRequestSurvivesWithBinaryCubin) {
  CandidateRequest r;
  r.instance = "blocktile1d_bm64_bn64_bk8_tm8";
  r.cubin = std::string("\x7f" "ELF\0\0\xff\x01", 8) + std::string(100000, '\0');
  r.loweredNames = {"_Z18sgemm_blocktile_1dILi64ELi64ELi8ELi8ELb0EEviiifPKfiS1_ifPfi", "_Z6reducev"};
  KernelLaunch main{0, {16, 32, 1}, {512, 1, 1}, 70000, sgemmKernelArgs()};
  KernelLaunch second{1, {4, 1, 1}, {128, 1, 1}, 0, {KernelArg::Workspace, KernelArg::C, KernelArg::Beta}};
  r.plan.launches = {main, second};
  r.plan.workspaceBytes = 1 << 20;
  GemmProblem padded = GemmProblem::packed(1000, 1000, 1000);
  padded.lda = 1004, padded.ldc = 1012, padded.alignB = 4, padded.betaZero = false;
  r.checkLayouts = {{GemmProblem::packed(1000, 1000, 1000), r.plan}, {padded, LaunchPlan::refused("no")}};
  r.verify = false;
  r.timing.bestSoFarMs = 1.25;
  r.timing.minReps = 7;
  json back = roundTrip(wire::runRequest(r));
  EXPECT_EQ(back.at("op"), "run");
  auto got = back.at("candidate").get<CandidateRequest>();
  EXPECT_EQ(got.cubin, r.cubin);
  EXPECT_EQ(got.loweredNames, r.loweredNames);
  ASSERT_EQ(got.plan.launches.size(), 2u);
  EXPECT_EQ(got.plan.launches[0].grid.y, 32u);
  EXPECT_EQ(got.plan.launches[0].block.x, 512u);
  EXPECT_EQ(got.plan.launches[0].dynamicSmemBytes, 70000);
  EXPECT_EQ(got.plan.launches[0].args, sgemmKernelArgs());
  EXPECT_EQ(got.plan.launches[1].kernel, 1);
  EXPECT_EQ(got.plan.launches[1].args, second.args);
  EXPECT_EQ(got.plan.workspaceBytes, 1 << 20);
  EXPECT_TRUE(got.plan.runnable());
  ASSERT_EQ(got.checkLayouts.size(), 2u);
  EXPECT_EQ(got.checkLayouts[0].plan.launches.size(), 2u);
  EXPECT_EQ(got.checkLayouts[0].problem.ldb, 1000);
  const GemmProblem& back1 = got.checkLayouts[1].problem;
  EXPECT_EQ(back1.lda, 1004);
  EXPECT_EQ(back1.ldc, 1012);
  EXPECT_EQ(back1.alignB, 4);
  EXPECT_EQ(back1.alignC, 16);
  EXPECT_FALSE(back1.betaZero);
  EXPECT_EQ(got.checkLayouts[1].plan.refusal, "no");
  EXPECT_FALSE(got.verify);
  EXPECT_TRUE(got.time);
  EXPECT_EQ(got.timing.bestSoFarMs, 1.25);
  EXPECT_EQ(got.timing.minReps, 7);
}

TEST(WorkerWire, ResultKeepsInfiniteErrorAndFatalFlag) {
  CandidateResult r;
  r.status = "wrong_result";
  r.detail = "random normal: 1 NaN";
  r.maxError = std::numeric_limits<double>::infinity();
  r.medianMs = 0.5;
  r.partial = true;
  json back = roundTrip(wire::resultReply(r, true));
  EXPECT_TRUE(back.at("fatal").get<bool>());
  auto got = back.at("result").get<CandidateResult>();
  EXPECT_EQ(got.status, r.status);
  EXPECT_TRUE(std::isinf(got.maxError));
  EXPECT_TRUE(got.partial);
  EXPECT_EQ(got.medianMs, 0.5);
}

TEST(WorkerWire, ProblemHelloAndErrors) {
  Problem p{4096, 1024, 512, 2.0};
  auto gotP = roundTrip(wire::problemRequest(p)).at("problem").get<Problem>();
  EXPECT_EQ(gotP.M, 4096);
  EXPECT_EQ(gotP.N, 1024);
  EXPECT_EQ(gotP.K, 512);
  EXPECT_EQ(gotP.beta, 2.0);
  WorkerInfo i;
  i.name = "NVIDIA H100 80GB HBM3";
  i.arch = "sm_90";
  i.l2Bytes = 50 << 20;
  auto gotI = roundTrip(wire::helloReply(i)).at("hello").get<WorkerInfo>();
  EXPECT_EQ(gotI.name, i.name);
  EXPECT_EQ(gotI.l2Bytes, i.l2Bytes);
  auto e = roundTrip(wire::errorReply("no CUDA driver", 69));
  EXPECT_FALSE(e.at("ok").get<bool>());
  EXPECT_EQ(e.at("exit_code"), 69);
}

TEST(WorkerWire, RejectsAbsurdLengthsAndNonCbor) {
  const unsigned char huge[4] = {0xff, 0xff, 0xff, 0xff};
  EXPECT_FALSE(wire::payloadLength(huge).has_value());
  EXPECT_THROW(wire::decodePayload("\xff\xfe garbage"), std::exception);
  EXPECT_THROW(wire::decodePayload(std::string("\x01", 1)), std::runtime_error);  // CBOR 1: not an object
}

// Frames over a plain blocking pipe without a deadline, as the worker reads and writes them: a
// frame arrives whole, end of input is Closed, an absurd header is Garbage.
TEST(WorkerWire, FramesCrossAPipeAsTheWorkerReadsThem) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const auto never = PipeClock::time_point::max();
  ASSERT_EQ(wire::writeFrame(fds[1], wire::canaryRequest(), never), wire::FrameIo::Ok);
  std::string payload;
  ASSERT_EQ(wire::readFrame(fds[0], payload, never), wire::FrameIo::Ok);
  EXPECT_EQ(wire::decodePayload(payload), wire::canaryRequest());
  ASSERT_EQ(::write(fds[1], "\xff\xff\xff\xff", 4), 4);
  EXPECT_EQ(wire::readFrame(fds[0], payload, never), wire::FrameIo::Garbage);
  ::close(fds[1]);
  EXPECT_EQ(wire::readFrame(fds[0], payload, never), wire::FrameIo::Closed);
  ::close(fds[0]);
}

TEST(ProblemLayout, RotationCopiesExceedTwiceL2AndStopWhenLarge) {
  const long long l2 = 50LL << 20;
  auto small = ProblemLayout::of({1024, 1024, 1024}, l2);
  EXPECT_EQ(small.rotationCopies, 9);  // 12 MiB per set, 100 MiB wanted
  EXPECT_GE(small.rotationCopies * 12LL << 20, 2 * l2);
  EXPECT_EQ(ProblemLayout::of({8192, 8192, 8192}, l2).rotationCopies, 1);
  EXPECT_EQ(ProblemLayout::of({17, 33, 7}, l2).rotationCopies, ProblemLayout::kMaxRotationCopies);
  auto big = ProblemLayout::of({8192, 8192, 8192}, l2);
  // Thirteen packed operands, then the packed layout's guarded C and the padded layout's A, B and
  // guarded C (pads 4, 8, 12 floats; 16-byte offsets; 256 canaries on each side of C).
  const std::uint64_t n = 8192, guards = 2 * ProblemLayout::kGuardElems;
  EXPECT_EQ(big.deviceBytes, 4 * (13 * n * n + (n * n + guards) + (n * (n + 4) + 4) + (n * (n + 8) + 4) +
                                  (n * (n + 12) + 4 + guards)));
}

TEST(ProblemLayout, CheckProblemsPadByFloat4sAndKeep16ByteAlignment) {
  // Odd N and K: the padded layout's rows are whole float4s (the vector paths with ragged rows).
  const Problem p{1000, 1001, 1002};
  auto all = ProblemLayout::checkProblems(p);
  ASSERT_EQ(all.size(), 4u);  // packed and padded, each with beta zero and not
  int paddedCount = 0;
  for (const GemmProblem& g : all) {
    EXPECT_EQ(g.m, 1000);
    EXPECT_EQ(g.n, 1001);
    EXPECT_EQ(g.k, 1002);
    EXPECT_EQ(g.alignA, 16);
    EXPECT_EQ(g.alignB, 16);
    EXPECT_EQ(g.alignC, 16);
    if (g.lda == g.k && g.ldb == g.n && g.ldc == g.n) continue;
    ++paddedCount;
    EXPECT_EQ(g.lda, 1004 + 4);
    EXPECT_EQ(g.ldb, 1004 + 8);
    EXPECT_EQ(g.ldc, 1004 + 12);
  }
  EXPECT_EQ(paddedCount, 2);
  EXPECT_TRUE(all[0].betaZero);
  EXPECT_FALSE(all[1].betaZero);
  // Distinct pads: a kernel that uses one leading dimension for another cannot pass.
  const GemmProblem padded = ProblemLayout::checkProblem(p, kCheckGeometries[1], true);
  EXPECT_NE(padded.lda - padded.k, padded.ldb - padded.n);
  EXPECT_NE(padded.ldb - padded.n, padded.ldc - padded.n);
  EXPECT_EQ(ProblemLayout::guardedCElems(p, kCheckGeometries[0]), 1000 * 1001 + 2 * ProblemLayout::kGuardElems);
}

TEST(ProblemLayout, IntegerRangeKeepsSumsExact) {
  EXPECT_EQ(ProblemLayout::of({64, 64, 8192}, 0).intRange, 8);
  auto deep = ProblemLayout::of({64, 64, 1 << 20}, 0);
  EXPECT_LE(static_cast<double>(1 << 20) * deep.intRange * deep.intRange + 2 * deep.intRange, 16777216.0);
  EXPECT_GE(deep.intRange, 1);
}

TEST(ProblemLayout, RejectsEmptyAndHugeDimensions) {
  EXPECT_THROW(ProblemLayout::of({0, 4, 4}, 0), UsageError);
  EXPECT_THROW(ProblemLayout::of({4, 4, 1LL << 32}, 0), UsageError);
}

TEST(TimingStats, MedianMinAndInterquartileSpread) {
  auto s = summarize({5, 1, 4, 2, 3});
  EXPECT_EQ(s.reps, 5);
  EXPECT_DOUBLE_EQ(s.medianMs, 3);
  EXPECT_DOUBLE_EQ(s.minMs, 1);
  EXPECT_DOUBLE_EQ(s.spread, (4.0 - 2.0) / 3.0);
  EXPECT_EQ(summarize({}).reps, 0);
}

TEST(TimingStats, StopRule) {
  TimingPolicy p;
  p.minReps = 3;
  p.maxReps = 10;
  p.spreadTarget = 0.05;
  p.budgetMs = 100;
  EXPECT_EQ(timingStop(p, summarize({1, 1}), 2), TimingStop::Continue);         // below minReps
  EXPECT_EQ(timingStop(p, summarize({1, 1, 1}), 3), TimingStop::Spread);
  EXPECT_EQ(timingStop(p, summarize({1, 2, 3}), 6), TimingStop::Continue);      // noisy, budget left
  EXPECT_EQ(timingStop(p, summarize({10, 20, 30, 40}), 100), TimingStop::Budget);
  EXPECT_EQ(timingStop(p, summarize(std::vector<double>(10, 1.0)), 10), TimingStop::MaxReps);
  p.bestSoFarMs = 1;
  p.earlyStopRatio = 1.5;
  EXPECT_EQ(timingStop(p, summarize({2, 2, 2}), 6), TimingStop::Slower);
  EXPECT_EQ(timingStop(p, summarize({1.2, 1.2, 1.2}), 3.6), TimingStop::Spread);
}

TEST(HelperKernels, CompileForHopperWithEveryEntryPoint) {
  CompileResult r = NvrtcCompiler::compile(HelperKernels::source(), HelperKernels::anchorKernel(), "sm_90");
  ASSERT_TRUE(r.ok) << r.log;
  EXPECT_EQ(r.loweredName, "gt_compare");
  for (const char* k : {"gt_fill_int", "gt_fill_normal", "gt_fill_bits", "gt_copy_rows", "gt_abs_copy", "gt_compare",
                        "gt_scan_guards", "gt_canary_sgemm"})
    EXPECT_NE(r.ptx.find(std::string(".entry ") + k), std::string::npos) << k;
}
