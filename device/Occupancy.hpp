// Occupancy: how many blocks of one kernel fit on one SM, computed exactly as CUDA does
// (cuda_occupancy.h / cuOccupancyMaxActiveBlocksPerMultiprocessor) from a GpuSpec, so filters
// and reports work without a GPU.
//
// Assumptions, matching how gemmtune launches: the default shared-memory carveout (the SM's
// maximum), opt-in to dynamic shared memory above the 48 KiB default whenever a kernel needs it,
// and no partitioned global caching or thread-block clusters. CUDA's block-barrier limit (sm_90:
// two per block slot) and virtual-resource limit (sm_100+) never bind for these kernels.
#pragma once

#include <string>

#include "gemmtune/GpuSpec.hpp"

namespace gemmtune {

// What one block of a kernel asks of an SM.
struct KernelFootprint {
  int threadsPerBlock = 0;
  int registersPerThread = 0;
  int staticSmemBytes = 0;
  int dynamicSmemBytes = 0;
};

enum OccupancyLimiter : unsigned {
  kLimitThreads = 1,       // resident threads, counted in whole warps (CUDA's "warps" limit)
  kLimitRegisters = 2,
  kLimitSharedMemory = 4,
  kLimitBlocks = 8,        // the SM's maximum resident blocks
};

struct Occupancy {
  static constexpr int kUnlimited = 1 << 30;  // a resource the kernel does not use

  int blocksPerSm = 0;
  int warpsPerBlock = 0;
  int activeWarps = 0;        // blocksPerSm * warpsPerBlock
  int maxWarpsPerSm = 0;
  double fraction = 0;        // activeWarps / maxWarpsPerSm
  unsigned limiters = 0;      // every OccupancyLimiter whose bound equals blocksPerSm

  // Blocks per SM each resource alone would allow (kUnlimited when unused).
  int blocksByThreads = 0;
  int blocksByRegisters = 0;
  int blocksBySharedMemory = 0;
  int blocksByBlockLimit = 0;

  int registersPerWarp = 0;   // allocated: registers × warp size rounded up to the unit
  int registersPerBlock = 0;  // allocated to one block
  int smemPerBlock = 0;       // allocated: static + dynamic + reservation, rounded up

  // "threads+registers", "-" when nothing limits (no block fits for another reason).
  std::string limiterNames() const;
};

Occupancy computeOccupancy(const GpuSpec& gpu, const KernelFootprint& kernel);

// The allocation rules cuda_occupancy.h applies per compute capability.
int smemAllocationUnit(const GpuSpec& gpu);    // 256 bytes up to sm_7x, 128 from sm_80
int registerSubPartitions(const GpuSpec& gpu); // 4 (2 on sm_60)

}  // namespace gemmtune
