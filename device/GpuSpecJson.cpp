#include "GpuSpecJson.hpp"

namespace gemmtune {

nlohmann::json toJson(const GpuSpec& g) {
  return {{"name", g.name},
          {"profile", g.profile.empty() ? nlohmann::json(nullptr) : nlohmann::json(g.profile)},
          {"device_index", g.deviceIndex < 0 ? nlohmann::json(nullptr) : nlohmann::json(g.deviceIndex)},
          {"uuid", g.uuid.empty() ? nlohmann::json(nullptr) : nlohmann::json(g.uuid)},
          {"compute_capability", std::to_string(g.ccMajor) + "." + std::to_string(g.ccMinor)},
          {"arch", g.arch()},
          {"sm_count", g.smCount},
          {"max_threads_per_block", g.maxThreadsPerBlock},
          {"max_threads_per_sm", g.maxThreadsPerSm},
          {"max_blocks_per_sm", g.maxBlocksPerSm},
          {"warp_size", g.warpSize},
          {"regs_per_sm", g.regsPerSm},
          {"regs_per_block", g.regsPerBlock},
          {"max_regs_per_thread", g.maxRegsPerThread},
          {"reg_alloc_unit", g.regAllocUnit},
          {"smem_per_sm_bytes", g.smemPerSm},
          {"smem_per_block_bytes", g.smemPerBlock},
          {"smem_per_block_optin_bytes", g.smemPerBlockOptin},
          {"smem_reserved_per_block_bytes", g.smemReservedPerBlock},
          {"max_grid_dim", {g.maxGridDimX, g.maxGridDimY, g.maxGridDimZ}},
          {"l2_bytes", g.l2Bytes},
          {"mem_clock_khz", g.memClockKhz},
          {"mem_bus_width_bits", g.memBusWidthBits},
          {"clock_khz", g.clockKhz},
          {"total_mem_bytes", g.totalMemBytes}};
}

}  // namespace gemmtune
