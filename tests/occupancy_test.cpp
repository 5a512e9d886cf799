// Occupancy vectors: the worked example of docs/design.md (CUDA occupancy calculator rules) plus cases derived by hand from CUDA's rules
// (cuda_occupancy.h) for several architectures. Each comment shows the arithmetic.
#include <gtest/gtest.h>

#include "GpuProfiles.hpp"
#include "Occupancy.hpp"

using namespace gemmtune;

namespace {

const GpuSpec& profile(const char* key) {
  const GpuProfile* p = findGpuProfile(key);
  if (!p) throw std::runtime_error(std::string("no profile ") + key);
  return p->spec;
}

Occupancy occ(const char* gpu, int threads, int regs, int staticSmem, int dynamicSmem = 0) {
  return computeOccupancy(profile(gpu), {threads, regs, staticSmem, dynamicSmem});
}

}  // namespace

// Worked example: RTX A6000, 1024 threads, 37 registers, 8 KiB shared memory.
TEST(Occupancy, DesignWorkedExampleA6000) {
  Occupancy o = occ("a6000", 1024, 37, 8192);
  EXPECT_EQ(o.blocksBySharedMemory, 11);  // 102400 / (8192 + 1024 reserved) = 11
  EXPECT_EQ(o.blocksByThreads, 1);        // 48 warps / 32
  EXPECT_EQ(o.blocksByRegisters, 1);      // 37*32 = 1184 -> 1280 per warp; 16384/1280 = 12 per sub-partition; 48 / 32
  EXPECT_EQ(o.blocksByBlockLimit, 16);
  EXPECT_EQ(o.blocksPerSm, 1);
  EXPECT_EQ(o.activeWarps, 32);
  EXPECT_EQ(o.maxWarpsPerSm, 48);
  EXPECT_NEAR(o.fraction, 2.0 / 3.0, 1e-12);
  EXPECT_EQ(o.limiters, unsigned(kLimitThreads | kLimitRegisters));
  EXPECT_EQ(o.limiterNames(), "threads+registers");
  EXPECT_EQ(o.registersPerWarp, 1280);
  EXPECT_EQ(o.registersPerBlock, 40960);
  EXPECT_EQ(o.smemPerBlock, 9216);
}

// H100 (sm_90): 64 warps, 32 blocks, 65536 registers, 228 KiB per SM, 227 KiB opt-in, 1 KiB reserved.
TEST(Occupancy, H100FullOccupancyWithSmallBlocks) {
  // 256 threads = 8 warps; 32 regs -> 1024 per warp -> 16 warps per sub-partition -> 64 warps.
  Occupancy o = occ("h100", 256, 32, 0);
  EXPECT_EQ(o.blocksByThreads, 8);
  EXPECT_EQ(o.blocksByRegisters, 8);
  EXPECT_EQ(o.blocksBySharedMemory, 228);  // only the 1 KiB reservation: 233472 / 1024
  EXPECT_EQ(o.blocksPerSm, 8);
  EXPECT_EQ(o.activeWarps, 64);
  EXPECT_DOUBLE_EQ(o.fraction, 1.0);
  EXPECT_EQ(o.limiterNames(), "threads+registers");
}

TEST(Occupancy, H100MaximumRegisters) {
  // 255 regs -> 8160 -> 8192 per warp -> 2 warps per sub-partition -> 8 warps -> 2 blocks of 4 warps.
  Occupancy o = occ("h100", 128, 255, 0);
  EXPECT_EQ(o.registersPerWarp, 8192);
  EXPECT_EQ(o.blocksByThreads, 16);
  EXPECT_EQ(o.blocksByRegisters, 2);
  EXPECT_EQ(o.blocksPerSm, 2);
  EXPECT_EQ(o.activeWarps, 8);
  EXPECT_DOUBLE_EQ(o.fraction, 0.125);
  EXPECT_EQ(o.limiterNames(), "registers");
}

TEST(Occupancy, H100RegistersPerBlockBoundary) {
  // 64 regs × 1024 threads = 65536: exactly the per-block file, one block.
  Occupancy fits = occ("h100", 1024, 64, 0);
  EXPECT_EQ(fits.registersPerBlock, 65536);
  EXPECT_EQ(fits.blocksPerSm, 1);
  EXPECT_EQ(fits.limiterNames(), "registers");
  EXPECT_DOUBLE_EQ(fits.fraction, 0.5);
  // 65 regs -> 2080 -> 2304 per warp (granularity) × 32 warps = 73728 > 65536: no block fits.
  Occupancy over = occ("h100", 1024, 65, 0);
  EXPECT_EQ(over.registersPerWarp, 2304);
  EXPECT_EQ(over.registersPerBlock, 73728);
  EXPECT_EQ(over.blocksPerSm, 0);
  EXPECT_EQ(over.limiterNames(), "registers");
}

TEST(Occupancy, H100SubPartitionRounding) {
  // 200 regs -> 6400 per warp; 10 warps allocate 64000 <= 65536, but the hardware check rounds
  // 10 warps up to 12 (4 sub-partitions): 76800 > 65536, so the block cannot launch.
  Occupancy o = occ("h100", 320, 200, 0);
  EXPECT_EQ(o.registersPerBlock, 64000);
  EXPECT_EQ(o.blocksByRegisters, 0);
  EXPECT_EQ(o.blocksPerSm, 0);
}

TEST(Occupancy, H100DynamicSharedMemoryWithOptIn) {
  // 100000 + 1024 reserved = 101024 -> 101120 (128-byte units); 233472 / 101120 = 2.
  Occupancy o = occ("h100", 64, 16, 0, 100000);
  EXPECT_EQ(o.smemPerBlock, 101120);
  EXPECT_EQ(o.blocksBySharedMemory, 2);
  EXPECT_EQ(o.blocksByThreads, 32);
  EXPECT_EQ(o.blocksByRegisters, 64);  // 512 per warp -> 32 per sub-partition -> 128 warps / 2
  EXPECT_EQ(o.blocksPerSm, 2);
  EXPECT_EQ(o.activeWarps, 4);
  EXPECT_DOUBLE_EQ(o.fraction, 4.0 / 64.0);
  EXPECT_EQ(o.limiterNames(), "smem");
}

TEST(Occupancy, H100OptInMaximumIsInclusive) {
  EXPECT_EQ(occ("h100", 128, 32, 0, 227 * 1024).blocksPerSm, 1);  // 232448 + 1024 = 233472 = the SM
  EXPECT_EQ(occ("h100", 128, 32, 0, 227 * 1024 + 1).blocksPerSm, 0);
  EXPECT_EQ(occ("h100", 128, 32, 0, 227 * 1024 + 1).limiterNames(), "smem");
}

TEST(Occupancy, H100SmemTiledBlocksize32) {
  // smem_bs32: 1024 threads, 32 regs, 8 KiB static: 2 blocks by threads and registers.
  Occupancy o = occ("h100", 1024, 32, 8192);
  EXPECT_EQ(o.blocksBySharedMemory, 25);  // 233472 / 9216
  EXPECT_EQ(o.blocksPerSm, 2);
  EXPECT_DOUBLE_EQ(o.fraction, 1.0);
  EXPECT_EQ(o.limiterNames(), "threads+registers");
}

TEST(Occupancy, L4BlockLimit) {
  // sm_89: 48 warps, 24 blocks. 64 threads (2 warps), 16 regs: threads allow 24, the block limit 24.
  Occupancy o = occ("l4", 64, 16, 0);
  EXPECT_EQ(o.blocksByThreads, 24);
  EXPECT_EQ(o.blocksByRegisters, 64);
  EXPECT_EQ(o.blocksBySharedMemory, 100);  // 102400 / 1024
  EXPECT_EQ(o.blocksByBlockLimit, 24);
  EXPECT_EQ(o.blocksPerSm, 24);
  EXPECT_DOUBLE_EQ(o.fraction, 1.0);
  EXPECT_EQ(o.limiterNames(), "threads+blocks");
}

TEST(Occupancy, A100RegistersBound) {
  // 48 regs -> 1536 per warp -> 10 warps per sub-partition -> 40 warps -> 1 block of 32.
  Occupancy o = occ("a100", 1024, 48, 0);
  EXPECT_EQ(o.blocksByRegisters, 1);
  EXPECT_EQ(o.blocksByThreads, 2);
  EXPECT_EQ(o.blocksPerSm, 1);
  EXPECT_DOUBLE_EQ(o.fraction, 0.5);
  EXPECT_EQ(o.limiterNames(), "registers");
}

TEST(Occupancy, T4SharedMemoryUsesTuringGranularity) {
  // sm_75: 256-byte units, no reservation. 8200 -> 8448; 65536 / 8448 = 7; threads: 32 / 8 = 4.
  Occupancy o = occ("t4", 256, 32, 8200);
  EXPECT_EQ(o.smemPerBlock, 8448);
  EXPECT_EQ(o.blocksBySharedMemory, 7);
  EXPECT_EQ(o.blocksByThreads, 4);
  EXPECT_EQ(o.blocksPerSm, 4);
  EXPECT_DOUBLE_EQ(o.fraction, 1.0);
  EXPECT_EQ(o.limiterNames(), "threads");
}

TEST(Occupancy, T4OptInMaximum) {
  EXPECT_EQ(occ("t4", 1024, 32, 0, 65536).blocksPerSm, 1);
  EXPECT_EQ(occ("t4", 1024, 32, 0, 65537).blocksPerSm, 0);
}

TEST(Occupancy, V100WithoutSharedMemory) {
  // sm_70, no reservation and no shared memory: shared memory does not bound at all.
  Occupancy o = occ("v100", 128, 16, 0);
  EXPECT_EQ(o.blocksBySharedMemory, Occupancy::kUnlimited);
  EXPECT_EQ(o.blocksByThreads, 16);
  EXPECT_EQ(o.blocksPerSm, 16);
  EXPECT_EQ(o.limiterNames(), "threads");
}

TEST(Occupancy, TooManyThreadsFitNowhere) {
  Occupancy o = occ("h100", 2048, 16, 0);
  EXPECT_EQ(o.blocksByThreads, 0);
  EXPECT_EQ(o.blocksPerSm, 0);
  EXPECT_EQ(o.limiterNames(), "threads");
}

TEST(Occupancy, PartialWarpsAllocateWholeWarps) {
  // 33 threads take 2 warps: 64 / 2 = 32 blocks, 64 active warps.
  Occupancy o = occ("h100", 33, 16, 0);
  EXPECT_EQ(o.warpsPerBlock, 2);
  EXPECT_EQ(o.blocksPerSm, 32);
  EXPECT_EQ(o.activeWarps, 64);
}
