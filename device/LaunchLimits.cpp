#include "LaunchLimits.hpp"

#include <fmt/format.h>

namespace gemmtune {

namespace {

std::optional<LimitViolation> smemViolation(const GpuSpec& gpu, int staticBytes, int dynamicBytes) {
  const long long total = static_cast<long long>(staticBytes) + dynamicBytes;
  if (staticBytes > gpu.smemPerBlock)
    return LimitViolation{"smem", fmt::format("static {} B > {} B per block (opt-in raises only dynamic shared memory)",
                                              staticBytes, gpu.smemPerBlock)};
  if (gpu.smemPerBlockOptin > gpu.smemPerBlock && total > gpu.smemPerBlockOptin)
    return LimitViolation{"smem", fmt::format("{} B > {} B opt-in maximum per block", total, gpu.smemPerBlockOptin)};
  if (gpu.smemPerBlockOptin <= gpu.smemPerBlock && total > gpu.smemPerBlock)
    return LimitViolation{"smem", fmt::format("{} B > {} B without opt-in (this GPU allows no more)", total, gpu.smemPerBlock)};
  return std::nullopt;
}

std::string blockBounds(const Occupancy& o) {
  auto v = [](int n) { return n >= Occupancy::kUnlimited ? std::string("any") : std::to_string(n); };
  return fmt::format("threads allow {}, registers {}, smem {}, block limit {}", v(o.blocksByThreads),
                     v(o.blocksByRegisters), v(o.blocksBySharedMemory), v(o.blocksByBlockLimit));
}

}  // namespace

std::optional<LimitViolation> blockLimitViolation(const GpuSpec& gpu, int threads, int staticSmem, int dynamicSmem) {
  if (threads < 1 || threads > gpu.maxThreadsPerBlock)
    return LimitViolation{"threads", fmt::format("{} > {} per block", threads, gpu.maxThreadsPerBlock)};
  return smemViolation(gpu, staticSmem, dynamicSmem);
}

std::optional<LimitViolation> kernelLimitViolation(const GpuSpec& gpu, const KernelFootprint& k) {
  if (auto v = blockLimitViolation(gpu, k.threadsPerBlock, k.staticSmemBytes, k.dynamicSmemBytes)) return v;
  if (k.registersPerThread < 0) return std::nullopt;
  const int regs = k.registersPerThread;
  if (regs > gpu.maxRegsPerThread)
    return LimitViolation{"regs", fmt::format("{} > {} per thread", regs, gpu.maxRegsPerThread)};
  const Occupancy o = computeOccupancy(gpu, k);
  // What the hardware checks: per-warp allocation units, warps rounded up to the sub-partitions.
  const int subPartitions = registerSubPartitions(gpu);
  const long long plain = static_cast<long long>(regs) * k.threadsPerBlock;
  const long long checked = static_cast<long long>(o.registersPerWarp) *
                            ((o.warpsPerBlock + subPartitions - 1) / subPartitions * subPartitions);
  if (checked > gpu.regsPerBlock) {
    if (checked == plain)
      return LimitViolation{"regs", fmt::format("{}×{} = {} > {} per block", regs, k.threadsPerBlock, plain, gpu.regsPerBlock)};
    return LimitViolation{"regs", fmt::format("{}×{} → {} allocated > {} per block", regs, k.threadsPerBlock, checked,
                                              gpu.regsPerBlock)};
  }
  if (o.blocksPerSm < 1) return LimitViolation{"occupancy", "0 blocks per SM (" + blockBounds(o) + ")"};
  return std::nullopt;
}

std::optional<LimitViolation> gridLimitViolation(const GpuSpec& gpu, const Dim3& g) {
  if (g.x < 1 || g.y < 1 || g.z < 1) return LimitViolation{"grid", fmt::format("{}x{}x{} is empty", g.x, g.y, g.z)};
  if (g.x > static_cast<unsigned>(gpu.maxGridDimX)) return LimitViolation{"grid", fmt::format("x {} > {}", g.x, gpu.maxGridDimX)};
  if (g.y > static_cast<unsigned>(gpu.maxGridDimY)) return LimitViolation{"grid", fmt::format("y {} > {}", g.y, gpu.maxGridDimY)};
  if (g.z > static_cast<unsigned>(gpu.maxGridDimZ)) return LimitViolation{"grid", fmt::format("z {} > {}", g.z, gpu.maxGridDimZ)};
  return std::nullopt;
}

}  // namespace gemmtune
