// Verifier: runs a candidate through the problem's three checks (README, "How a run works"): small integers
// with beta 0 and 2 must equal the cuBLAS reference exactly; random normal data must be finite
// and within 4·sqrt(K)·2^-24·|alpha|·(|A||B|)ij. C is filled with NaN before every check that
// does not read it, so a kernel that skips elements or reads C at beta = 0 cannot pass.
//
// Every check runs in every layout of ProblemLayout::geometries: packed, padded (leading
// dimensions above the minimum, base pointers off the allocation's alignment, gaps between
// batches) and, for batched problems, pointer arrays (permuted, unevenly spaced matrices). A and B
// are stored as the problem's layout says; every batch holds inputs of its own, and every batch's
// C is compared. The C matrices sit between guards and, padded, have padding columns, all holding
// kGuardCanary; a canary changed by the launch means the kernel wrote outside C (the detail names
// where, and which batch), which passes no check even when every element of C is right.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "GpuContext.hpp"
#include "HelperKernels.hpp"
#include "LoadedKernel.hpp"
#include "ProblemData.hpp"

namespace gemmtune {

struct Verdict {
  bool ok = true;
  double maxError = 0;  // max |C - ref| / tolerance over all checks (+inf for NaN/Inf)
  int checksRun = 0;    // checks whose layout the candidate's plans accept
  std::string detail;   // empty when ok; otherwise every failing check, "; "-separated
  std::string skipped;  // layouts whose plan the configuration refuses, "; "-separated (never a failure)
};

// Enqueues the candidate with `plan`; faults propagate as CudaError / LaunchRefused.
using PlanLauncher = std::function<void(const LaunchPlan& plan, const SgemmArgs& args)>;

// Every check in every layout. `layouts` are the request's plans, one per problem the checks pose
// (ProblemLayout::checkProblems). Throws UsageError when a check's problem has no plan among them
// (a parent/worker mismatch).
Verdict verify(const ProblemData& data, const GpuContext& gpu, const HelperKernels& k,
               const std::vector<CheckLayout>& layouts, const PlanLauncher& launch);

// The packed layout's checks only (guards included), for launchers that take no plan and may
// assume packed operands (the benchmark's cuBLAS and library contenders).
Verdict verify(const ProblemData& data, const GpuContext& gpu, const HelperKernels& k,
               const std::function<void(const SgemmArgs&)>& launch);

// Every check in every layout, for a launcher that takes no plan and reads any leading
// dimension, alignment, stride and pointer array (cuBLAS as a candidate: the tuner's rows).
Verdict verifyEveryLayout(const ProblemData& data, const GpuContext& gpu, const HelperKernels& k,
                          const std::function<void(const SgemmArgs&)>& launch);

}  // namespace gemmtune
