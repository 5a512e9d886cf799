#include "Occupancy.hpp"

#include <algorithm>

namespace gemmtune {

namespace {

int divUp(long long x, long long y) { return static_cast<int>((x + y - 1) / y); }
int roundUp(long long x, long long y) { return static_cast<int>(y * ((x + y - 1) / y)); }

// The per-block shared-memory ceiling the launch is checked against. Above the default the
// launcher opts in, so the opt-in maximum applies; sm_80+ add the reservation on top
// (cudaOccSMemPerBlock).
long long smemLimitPerBlock(const GpuSpec& g, long long totalWithReservation) {
  long long limit = totalWithReservation > g.smemPerBlock ? std::max(g.smemPerBlockOptin, g.smemPerBlock) : g.smemPerBlock;
  if (g.ccMajor >= 8) limit += g.smemReservedPerBlock;
  return limit;
}

int blocksByThreads(const GpuSpec& g, int threads, int warpsPerBlock) {
  if (threads > g.maxThreadsPerBlock) return 0;
  return (g.maxThreadsPerSm / g.warpSize) / warpsPerBlock;
}

int blocksByRegisters(const GpuSpec& g, const KernelFootprint& k, int warpsPerBlock, Occupancy& o) {
  const int subPartitions = registerSubPartitions(g);
  o.registersPerWarp = roundUp(static_cast<long long>(k.registersPerThread) * g.warpSize, g.regAllocUnit);
  o.registersPerBlock = o.registersPerWarp * warpsPerBlock;
  // The hardware checks the per-block limit as if every sub-partition got the same number of
  // warps, so the warp count is rounded up to the sub-partitions first.
  const long long assumed = static_cast<long long>(o.registersPerWarp) * roundUp(warpsPerBlock, subPartitions);
  if (assumed > g.regsPerBlock || o.registersPerBlock > g.regsPerBlock || k.registersPerThread > g.maxRegsPerThread)
    return 0;
  if (o.registersPerWarp == 0) return Occupancy::kUnlimited;
  // Registers live in the sub-partitions: whole warps per sub-partition, times their number.
  const int warpsPerSubPartition = (g.regsPerSm / subPartitions) / o.registersPerWarp;
  return warpsPerSubPartition * subPartitions / warpsPerBlock;
}

int blocksBySharedMemory(const GpuSpec& g, const KernelFootprint& k, Occupancy& o) {
  const long long total = static_cast<long long>(k.staticSmemBytes) + k.dynamicSmemBytes + g.smemReservedPerBlock;
  o.smemPerBlock = roundUp(total, smemAllocationUnit(g));
  if (o.smemPerBlock > smemLimitPerBlock(g, total)) return 0;
  if (o.smemPerBlock == 0) return Occupancy::kUnlimited;
  return g.smemPerSm / o.smemPerBlock;
}

}  // namespace

int smemAllocationUnit(const GpuSpec& gpu) { return gpu.ccMajor >= 8 ? 128 : 256; }

int registerSubPartitions(const GpuSpec& gpu) { return gpu.ccMajor == 6 && gpu.ccMinor == 0 ? 2 : 4; }

Occupancy computeOccupancy(const GpuSpec& g, const KernelFootprint& k) {
  Occupancy o;
  o.warpsPerBlock = divUp(std::max(k.threadsPerBlock, 1), g.warpSize);
  o.maxWarpsPerSm = g.maxThreadsPerSm / g.warpSize;
  o.blocksByThreads = blocksByThreads(g, k.threadsPerBlock, o.warpsPerBlock);
  o.blocksByRegisters = blocksByRegisters(g, k, o.warpsPerBlock, o);
  o.blocksBySharedMemory = blocksBySharedMemory(g, k, o);
  o.blocksByBlockLimit = g.maxBlocksPerSm;
  o.blocksPerSm = std::min({o.blocksByThreads, o.blocksByRegisters, o.blocksBySharedMemory, o.blocksByBlockLimit});
  if (k.threadsPerBlock <= 0) o.blocksPerSm = 0;
  if (o.blocksPerSm == o.blocksByThreads) o.limiters |= kLimitThreads;
  if (o.blocksPerSm == o.blocksByRegisters) o.limiters |= kLimitRegisters;
  if (o.blocksPerSm == o.blocksBySharedMemory) o.limiters |= kLimitSharedMemory;
  if (o.blocksPerSm == o.blocksByBlockLimit) o.limiters |= kLimitBlocks;
  o.activeWarps = o.blocksPerSm * o.warpsPerBlock;
  o.fraction = o.maxWarpsPerSm > 0 ? static_cast<double>(o.activeWarps) / o.maxWarpsPerSm : 0.0;
  return o;
}

std::string Occupancy::limiterNames() const {
  std::string out;
  auto add = [&](unsigned bit, const char* name) {
    if (limiters & bit) out += (out.empty() ? "" : "+") + std::string(name);
  };
  add(kLimitThreads, "threads");
  add(kLimitRegisters, "registers");
  add(kLimitSharedMemory, "smem");
  add(kLimitBlocks, "blocks");
  return out.empty() ? "-" : out;
}

}  // namespace gemmtune
