// LaunchLimits: the one rule for "can this GPU run this kernel": threads per block, registers per
// thread and per block with CUDA's allocation granularity, static and dynamic shared memory with
// the opt-in maximum, at least one resident block (the per-block reservation included, as in
// Occupancy), and the grid limits. The filters, the worker, the lookup of stored rows and the
// library's loader all ask it, so they can never disagree.
#pragma once

#include <optional>
#include <string>

#include "LaunchPlan.hpp"
#include "Occupancy.hpp"
#include "gemmtune/GpuSpec.hpp"

namespace gemmtune {

struct LimitViolation {
  std::string limit;   // "threads", "regs", "smem", "occupancy", "grid"
  std::string reason;  // with the numbers: "67584 B > 49152 B without opt-in"
};

// Limits known before compiling: threads per block and shared memory.
std::optional<LimitViolation> blockLimitViolation(const GpuSpec& gpu, int threadsPerBlock, int staticSmemBytes,
                                                  int dynamicSmemBytes);
// Everything, once the registers are known (registers < 0: unknown, not judged).
std::optional<LimitViolation> kernelLimitViolation(const GpuSpec& gpu, const KernelFootprint& kernel);
std::optional<LimitViolation> gridLimitViolation(const GpuSpec& gpu, const Dim3& grid);

}  // namespace gemmtune
