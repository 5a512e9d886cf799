// Worker protocol and the worker's pure parts: wire round-trips, frame headers, frames over a
// pipe, the problem layout, timing statistics, and that the helper kernels compile with NVRTC
// (no GPU needed).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <limits>
#include <set>

#include "CandidateRequests.hpp"
#include "FamilyRegistry.hpp"
#include "NvrtcCompiler.hpp"
#include "fault_family.hpp"
#include "gemmtune/Errors.hpp"
#include "worker/AccuracyKernels.hpp"
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
  main.oneWave = true;
  r.plan.launches = {main, second};
  r.plan.workspaceBytes = 1 << 20;
  GemmProblem padded = GemmProblem::packed(1000, 1000, 1000);
  padded.lda = 1004, padded.ldc = 1012, padded.alignB = 4, padded.betaZero = false;
  r.checkLayouts = {{GemmProblem::packed(1000, 1000, 1000), r.plan}, {padded, LaunchPlan::refused("no")}};
  r.verify = false;
  r.faithful = true;
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
  EXPECT_TRUE(got.plan.launches[0].oneWave);
  EXPECT_FALSE(got.plan.launches[1].oneWave);
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
  EXPECT_TRUE(got.faithful);
  EXPECT_TRUE(got.time);
  EXPECT_EQ(got.timing.bestSoFarMs, 1.25);
  EXPECT_EQ(got.timing.minReps, 7);
}

TEST(WorkerWire, LayoutsBatchesStridesAndPointerArraysSurvive) {
  Problem p{4096, 1024, 512, 2.0, Layout{true, false}, 8};
  auto gotP = roundTrip(wire::problemRequest(p)).at("problem").get<Problem>();
  EXPECT_EQ(gotP.shape(), p.shape());
  EXPECT_EQ(gotP.beta, 2.0);

  GemmProblem strided = GemmProblem::packed(GemmShape{64, 48, 32, Layout{false, true}, 5});
  strided.strideC += 256, strided.alignB = 8;
  GemmProblem arrays = GemmProblem::packed(GemmShape{64, 48, 32, Layout{true, true}, 3});
  arrays.strideA = arrays.strideB = arrays.strideC = 0, arrays.pointerArrays = true;
  arrays.alignA = arrays.alignB = arrays.alignC = 4;
  for (const GemmProblem& want : {strided, arrays}) {
    CandidateRequest r;
    r.checkLayouts = {{want, LaunchPlan::refused("no")}};
    const GemmProblem got =
        roundTrip(wire::runRequest(r)).at("candidate").get<CandidateRequest>().checkLayouts.at(0).problem;
    EXPECT_EQ(got.text(), want.text());
    EXPECT_EQ(got.layout, want.layout);
    EXPECT_EQ(got.batch, want.batch);
    EXPECT_EQ(got.strideA, want.strideA);
    EXPECT_EQ(got.strideB, want.strideB);
    EXPECT_EQ(got.strideC, want.strideC);
    EXPECT_EQ(got.pointerArrays, want.pointerArrays);
    EXPECT_EQ(got.alignB, want.alignB);
  }

  json bad = json(p);
  bad["layout"] = "nx";
  EXPECT_THROW(bad.get<Problem>(), std::runtime_error);
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
  EXPECT_EQ(ProblemLayout::place(p, kCheckGeometries[0]).c.allocElems, 1000 * 1001 + 2 * ProblemLayout::kGuardElems);
}

TEST(ProblemLayout, TransposedOperandsAreStoredTransposedInEveryLayout) {
  const Problem nn{1000, 1001, 1002}, tn{1000, 1001, 1002, 0.0, Layout{true, false}};
  for (const GemmProblem& g : ProblemLayout::checkProblems(tn)) {
    EXPECT_EQ(g.layout, tn.layout);
    EXPECT_TRUE(malformedProblem(g).empty()) << malformedProblem(g);
  }
  // op(A) = T: A is stored as K rows of M, padded to whole float4s and 4 more; B as it was.
  const CheckPlacement packed = ProblemLayout::place(tn, kCheckGeometries[0]);
  EXPECT_EQ(packed.a.rows, 1002);
  EXPECT_EQ(packed.a.cols, 1000);
  EXPECT_EQ(packed.a.ld, 1000);
  EXPECT_TRUE(packed.ownA) << "the packed layout needs its own transposed A";
  EXPECT_FALSE(packed.ownB) << "B is stored as the inputs are";
  const GemmProblem padded = ProblemLayout::checkProblem(tn, kCheckGeometries[1], true);
  EXPECT_EQ(padded.lda, 1000 + 4);
  EXPECT_EQ(padded.ldb, 1004 + 8);
  EXPECT_EQ(padded.strideA, 0);
  // The packed check poses exactly the problem timing launches.
  const GemmProblem timed = GemmProblem::packed(tn.shape()), checked = ProblemLayout::checkProblem(tn, kCheckGeometries[0], true);
  EXPECT_EQ(checked.text(), timed.text());
  // Memory: the packed layout's own transposed A comes on top of nn's, and the padded A has 1002
  // rows of 1004 floats instead of 1000 rows of 1008.
  EXPECT_EQ(ProblemLayout::of(tn, 0).deviceBytes,
            ProblemLayout::of(nn, 0).deviceBytes + 4ull * 1000 * 1002 + 4ull * 1002 * 1004 - 4ull * 1000 * 1008);
}

TEST(ProblemLayout, BatchesRunStridedPackedStridedPaddedAndPointerArrays) {
  const long long M = 67, N = 45, K = 37, n = 3;
  const Problem p{M, N, K, 0.0, Layout{}, n};
  auto all = ProblemLayout::checkProblems(p);
  ASSERT_EQ(all.size(), 6u);
  for (const GemmProblem& g : all) {
    EXPECT_EQ(g.batch, n);
    EXPECT_TRUE(malformedProblem(g).empty()) << malformedProblem(g);
  }
  // Strided packed: exactly the timed problem; odd strides leave every batch 4-byte aligned only.
  const GemmProblem packed = all[0];
  EXPECT_EQ(packed.strideA, M * K);
  EXPECT_EQ(packed.strideB, K * N);
  EXPECT_EQ(packed.strideC, M * N);
  EXPECT_EQ(packed.alignA, 4);
  EXPECT_FALSE(packed.pointerArrays);
  const CheckPlacement pp = ProblemLayout::place(p, kCheckGeometries[0]);
  EXPECT_FALSE(pp.ownA);
  EXPECT_FALSE(pp.ownB);
  EXPECT_EQ(pp.c.allocElems, 2 * ProblemLayout::kGuardElems + n * M * N);
  // Strided padded: gaps after every matrix, strides whole float4s so float4 forms still run.
  const GemmProblem padded = all[2];
  EXPECT_EQ(padded.lda, 44);
  EXPECT_EQ(padded.strideA, M * 44 + 16);
  EXPECT_EQ(padded.strideB, K * 56 + 32);
  EXPECT_EQ(padded.strideC, M * 60 + ProblemLayout::kGuardElems);
  EXPECT_EQ(padded.alignA, 16);
  EXPECT_EQ(padded.alignB, 16);
  EXPECT_EQ(padded.alignC, 16);
  // Pointer arrays: no strides, 4-byte alignment.
  const GemmProblem arrays = all[4];
  EXPECT_TRUE(arrays.pointerArrays);
  EXPECT_EQ(arrays.strideA, 0);
  EXPECT_EQ(arrays.alignA, 4);
  EXPECT_EQ(arrays.alignC, 4);
  // One set of operands per batch, and each layout's own A, B, C and pointers.
  const long long a = M * K, b = K * N, c = M * N, guard = ProblemLayout::kGuardElems, slack = ProblemLayout::kArraySlack;
  const long long operands = n * (3 * a + 3 * b + 7 * c), packedC = 2 * guard + n * c;
  const long long paddedAll = (4 + (n - 1) * padded.strideA + M * 44) + (4 + (n - 1) * padded.strideB + K * 56) +
                              (guard + 4 + (n - 1) * padded.strideC + M * 60 + guard);
  const long long arraysAll = n * (a + slack) + n * (b + slack) + (guard + n * (c + guard) + guard) + 2 * 3 * n;
  EXPECT_EQ(ProblemLayout::of(p, 0).deviceBytes, 4ull * (operands + packedC + paddedAll + arraysAll));
}

// The pointer-array layout scatters the matrices so that no stride reaches them from the first:
// reverse order, uneven distances, no overlap, canaries between every two C.
TEST(ProblemLayout, PointerArraysArePermutedUnevenAndApart) {
  for (long long n : {2LL, 3LL, 7LL, 64LL}) {
    const Problem p{67, 45, 37, 0.0, Layout{false, true}, n};
    const CheckPlacement pl = ProblemLayout::place(p, kCheckGeometries[2]);
    for (const OperandPlacement* o : {&pl.a, &pl.b, &pl.c}) {
      std::vector<long long> starts;
      for (long long b = 0; b < n; ++b) starts.push_back(o->start(b));
      std::set<long long> distances;
      for (long long b = 0; b + 1 < n; ++b) {
        EXPECT_GT(starts[b], starts[b + 1]) << "batch " << b << " lies after batch " << b + 1;
        EXPECT_GE(starts[b] - starts[b + 1], o->span()) << "matrices overlap";
        distances.insert(starts[b] - starts[b + 1]);
      }
      if (n > 2) {
        EXPECT_GT(distances.size(), 1u) << "batch " << n << ": evenly spaced";
      }
      EXPECT_GE(starts[n - 1], 0);
      EXPECT_LE(starts[0] + o->span(), o->allocElems);
    }
    EXPECT_EQ(pl.b.rows, 45) << "op(B) = T stores N rows of K";
    const long long guard = ProblemLayout::kGuardElems;
    EXPECT_GE(pl.c.start(n - 1), guard);
    EXPECT_GE(pl.c.allocElems - (pl.c.start(0) + pl.c.span()), guard);
    for (long long b = 0; b + 1 < n; ++b) EXPECT_GE(pl.c.start(b) - (pl.c.start(b + 1) + pl.c.span()), guard - 29);
  }
  EXPECT_TRUE(ProblemLayout::geometries(Problem{64, 64, 64}).size() == 2u) << "pointer arrays are for batches only";
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
  EXPECT_THROW(ProblemLayout::of({4, 4, 4, 0.0, Layout{}, 0}, 0), UsageError);
  EXPECT_THROW(ProblemLayout::of({65536, 65536, 65536, 0.0, Layout{}, 1 << 20}, 0), UsageError);
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
  for (const char* k : {"gt_fill_int", "gt_fill_normal", "gt_fill_bits", "gt_copy_into", "gt_abs_copy", "gt_compare",
                        "gt_scan_canaries", "gt_canary_sgemm", "gt_class_mismatch", "gt_hold"})
    EXPECT_NE(r.ptx.find(std::string(".entry ") + k), std::string::npos) << k;
}

// Tensor-core families are asked for the faithful checks, with room in the deadline for building
// the problem's data sets; FP32 families are not.
TEST(CandidateRequests, FaithfulChecksFollowTheFamilysPrecision) {
  const GemmShape shape{4096, 4096, 4096};
  const TimingPolicy timing;
  for (const auto& [name, faithful] : {std::pair{"tf32x3_bm128_bn128_bk32_wm64_wn32_st3_sw4_sk1", true},
                                       std::pair{"cutlass_bm32_bn128_bk8_wm32_wn32_st3_sw4_sk1", false}}) {
    const Config c = FamilyRegistry::builtin().parseName(name);
    EXPECT_EQ(requestFor(c, CompileResult{}, shape, timing).faithful, faithful) << name;
  }
  EXPECT_GT(deadlineSecFor(shape, timing, true), deadlineSecFor(shape, timing, false) + 1);
}

// The faithful checks' kernels compile for the oldest and newest architecture with tensor-core
// families (shuffles of doubles, 64-bit atomics) and every entry point is in the module.
TEST(AccuracyKernels, CompileForAmpereAndHopperWithEveryEntryPoint) {
  for (const char* arch : {"sm_80", "sm_90"}) {
    CompileResult r = NvrtcCompiler::compile(AccuracyKernels::source(), AccuracyKernels::anchorKernel(), arch);
    ASSERT_TRUE(r.ok) << arch << ": " << r.log;
    for (const char* k : {"ak_fill_uniform", "ak_scale_lines", "ak_reference_f64", "ak_errors"})
      EXPECT_NE(r.ptx.find(std::string(".entry ") + k), std::string::npos) << k;
  }
}

// The fault family's template includes the kernels' batch header, as a templates directory holds
// it; every layout and the batch-ignoring mode compile.
TEST(FaultFamily, CompilesInEveryLayoutWithTheBatchHeader) {
  const Family family = test::faultFamily();
  for (const Layout& layout : Layout::all())
    for (int mode : {0, 13}) {
      const Config c{&family, {mode}, true, layout};
      CompileResult r = test::compileFault(c, "sm_90");
      EXPECT_TRUE(r.ok) << c.name() << ": " << r.log;
    }
}
