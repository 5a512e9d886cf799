// LaunchArgs: the operands of one SGEMM bound to a plan's argument list, and the problem they
// pose (pointer alignment, beta class). No GPU needed: only addresses and values are checked.
// Run: ctest -R LaunchArgs
#include <gtest/gtest.h>

#include "LaunchArgs.hpp"

using namespace gemmtune;

TEST(LaunchArgs, EachArgumentPointsAtItsValueInPlanOrder) {
  const SgemmArgs a{7, 8, 9, 1.5f, 0x1000, 10, 0x2000, 11, 2.0f, 0x3000, 12, 0x4000};
  KernelLaunch l;
  l.args = {KernelArg::Workspace, KernelArg::C, KernelArg::Beta, KernelArg::K, KernelArg::Alpha, KernelArg::Lda};
  ArgumentPack pack(l, a);
  void** p = pack.pointers();
  EXPECT_EQ(*static_cast<CUdeviceptr*>(p[0]), 0x4000u);
  EXPECT_EQ(*static_cast<CUdeviceptr*>(p[1]), 0x3000u);
  EXPECT_EQ(*static_cast<float*>(p[2]), 2.0f);
  EXPECT_EQ(*static_cast<int*>(p[3]), 9);
  EXPECT_EQ(*static_cast<float*>(p[4]), 1.5f);
  EXPECT_EQ(*static_cast<int*>(p[5]), 10);
}

TEST(LaunchArgs, TheSgemmContractInItsOrder) {
  const SgemmArgs a{1, 2, 3, 4.0f, 0x10, 5, 0x20, 6, 0.0f, 0x30, 7};
  KernelLaunch l;
  l.args = sgemmKernelArgs();
  ArgumentPack pack(l, a);
  void** p = pack.pointers();
  EXPECT_EQ(*static_cast<int*>(p[0]), 1);
  EXPECT_EQ(*static_cast<int*>(p[1]), 2);
  EXPECT_EQ(*static_cast<int*>(p[2]), 3);
  EXPECT_EQ(*static_cast<CUdeviceptr*>(p[4]), 0x10u);
  EXPECT_EQ(*static_cast<int*>(p[7]), 6);
  EXPECT_EQ(*static_cast<CUdeviceptr*>(p[9]), 0x30u);
  EXPECT_EQ(*static_cast<int*>(p[10]), 7);
}

TEST(LaunchArgs, ProblemOfReadsAlignmentAndBetaClass) {
  const SgemmArgs a{100, 200, 300, 1.0f, 0x1004, 301, 0x2008, 200, 0.5f, 0x3010, 204};
  GemmProblem p = problemOf(a);
  EXPECT_EQ(p.m, 100);
  EXPECT_EQ(p.lda, 301);
  EXPECT_EQ(p.ldc, 204);
  EXPECT_EQ(p.alignA, 4);
  EXPECT_EQ(p.alignB, 8);
  EXPECT_EQ(p.alignC, 16);
  EXPECT_FALSE(p.betaZero);
  EXPECT_EQ(p.text(), "100x200x300 lda 301 ldb 200 ldc 204 A+4B B+8B");
}
