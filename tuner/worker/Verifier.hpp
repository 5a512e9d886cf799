// Verifier: runs a candidate through the problem's three checks (README, "How a run works"): small integers
// with beta 0 and 2 must equal the cuBLAS reference exactly; random normal data must be finite
// and within 4·sqrt(K)·2^-24·|alpha|·(|A||B|)ij. C is filled with NaN before every check that
// does not read it, so a kernel that skips elements or reads C at beta = 0 cannot pass.
#pragma once

#include <functional>
#include <string>

#include "GpuContext.hpp"
#include "HelperKernels.hpp"
#include "LoadedKernel.hpp"
#include "ProblemData.hpp"

namespace gemmtune {

struct Verdict {
  bool ok = true;
  double maxError = 0;  // max |C - ref| / tolerance over all checks (+inf for NaN/Inf)
  std::string detail;   // empty when ok; otherwise every failing check, "; "-separated
};

// `launch(args)` enqueues the candidate; faults propagate as CudaError / LaunchRefused.
Verdict verify(const ProblemData& data, const GpuContext& gpu, const HelperKernels& k,
               const std::function<void(const SgemmArgs&)>& launch);

}  // namespace gemmtune
