// What the worker's GPU tests share: a short timing policy, a candidate request for a problem as
// the tuner builds one (the timing plan for GemmProblem::packed, a plan per verification layout),
// and a fixture holding GPU 0's context and the worker's helper kernels.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "CompileResult.hpp"
#include "Family.hpp"
#include "FamilyPlans.hpp"
#include "WorkerProtocol.hpp"
#include "CudaDriver.hpp"
#include "worker/GpuContext.hpp"
#include "worker/HelperKernels.hpp"
#include "worker/ProblemLayout.hpp"

namespace gemmtune::test {

inline TimingPolicy quickTiming() {
  TimingPolicy p;
  p.warmupMs = 20;
  p.budgetMs = 50;
  p.minReps = 5;
  p.maxReps = 50;
  return p;
}

inline CandidateRequest requestFor(const Config& config, const CompileResult& r, const Problem& p,
                                   const TimingPolicy& timing) {
  CandidateRequest req;
  req.instance = config.name();
  req.cubin = r.cubin;
  req.loweredNames = r.loweredNames;
  req.plan = planLaunch(config, GemmProblem::packed(p.shape()));
  for (const GemmProblem& layout : ProblemLayout::checkProblems(p)) req.checkLayouts.push_back({layout, planLaunch(config, layout)});
  req.timing = timing;
  // No faithful checks (the tuner's requestFor asks them of tensor-core families): these tests are
  // about layouts, batches and faults; tests/faithful_gpu_test.cpp asks for them itself.
  return req;
}

// GPU 0 and the helper kernels on its stream, for tests that drive the worker's parts in-process;
// skipped without a driver. A fixture that needs more sets it up after calling SetUp().
class HelpersOnGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!CudaDriver::available()) GTEST_SKIP() << "no CUDA driver/GPU";
    gpu_ = std::make_unique<GpuContext>(0);
    helpers_ = std::make_unique<HelperKernels>(gpu_->info().arch, gpu_->stream(), gpu_->info().smCount);
  }

  std::unique_ptr<GpuContext> gpu_;
  std::unique_ptr<HelperKernels> helpers_;
};

}  // namespace gemmtune::test
