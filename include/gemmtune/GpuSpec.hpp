// GpuSpec: the limits and identity of one GPU, as the tuner, the results store and the library
// see it. Filled from the driver (device/GpuDetect) or from an offline profile (device/GpuProfiles).
#pragma once

#include <cstdint>
#include <string>

namespace gemmtune {

struct GpuSpec {
  std::string name;          // e.g. "NVIDIA H100 80GB HBM3"; profiles use the marketing name
  std::string profile;       // offline profile key ("h100") or empty for a detected GPU
  int ccMajor = 0;
  int ccMinor = 0;
  int smCount = 0;
  int maxThreadsPerBlock = 1024;
  int maxThreadsPerSm = 2048;
  int maxBlocksPerSm = 32;
  int warpSize = 32;
  int regsPerSm = 65536;
  int regsPerBlock = 65536;
  int maxRegsPerThread = 255;
  int regAllocUnit = 256;            // registers are allocated per warp in units of this many
  int smemPerSm = 0;                 // bytes usable by blocks on one SM
  int smemPerBlock = 48 * 1024;      // default limit without opt-in
  int smemPerBlockOptin = 48 * 1024; // limit with CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
  int smemReservedPerBlock = 0;      // reserved by the system per block (1 KiB on sm_80+)
  int maxGridDimX = 2147483647;
  int maxGridDimY = 65535;
  int maxGridDimZ = 65535;
  int l2Bytes = 0;
  int memClockKhz = 0;
  int memBusWidthBits = 0;
  int clockKhz = 0;
  std::int64_t totalMemBytes = 0;
  std::string uuid;                  // empty for offline profiles
  int deviceIndex = -1;              // driver ordinal, -1 for offline profiles

  // "sm_90" etc.: the NVRTC compile target for this GPU.
  std::string arch() const { return "sm_" + std::to_string(ccMajor) + std::to_string(ccMinor); }
};

}  // namespace gemmtune
