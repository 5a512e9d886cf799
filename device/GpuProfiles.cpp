#include "GpuProfiles.hpp"

#include <algorithm>
#include <cctype>

namespace gemmtune {

namespace {

constexpr int KiB = 1024;
constexpr std::int64_t GiB = 1024LL * 1024 * 1024;

// Per-SM limits follow the compute capability (CUDA C++ Programming Guide, "Technical
// Specifications per Compute Capability"; the same numbers drive cuda_occupancy.h). Per-board
// numbers (SMs, clocks, L2, memory) come from the vendor datasheets / whitepapers, with memory
// clocks as the driver reports them (CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, half the data rate).
GpuSpec computeCapability(int major, int minor) {
  GpuSpec s;
  s.ccMajor = major;
  s.ccMinor = minor;
  s.maxThreadsPerBlock = 1024;
  s.warpSize = 32;
  s.regsPerSm = 65536;
  s.regsPerBlock = 65536;
  s.maxRegsPerThread = 255;
  s.regAllocUnit = 256;
  s.smemPerBlock = 48 * KiB;
  const int cc = major * 10 + minor;
  switch (cc) {
    case 70:  // Volta: 96 KiB unified carveout, all of it opt-in per block, no reservation
      s.maxThreadsPerSm = 2048, s.maxBlocksPerSm = 32;
      s.smemPerSm = 96 * KiB, s.smemPerBlockOptin = 96 * KiB, s.smemReservedPerBlock = 0;
      break;
    case 75:  // Turing: 32 warps and 16 blocks per SM, 64 KiB shared memory
      s.maxThreadsPerSm = 1024, s.maxBlocksPerSm = 16;
      s.smemPerSm = 64 * KiB, s.smemPerBlockOptin = 64 * KiB, s.smemReservedPerBlock = 0;
      break;
    case 80:  // GA100: 164 KiB per SM, 163 KiB per block, 1 KiB reserved per block
      s.maxThreadsPerSm = 2048, s.maxBlocksPerSm = 32;
      s.smemPerSm = 164 * KiB, s.smemPerBlockOptin = 163 * KiB, s.smemReservedPerBlock = KiB;
      break;
    case 86:  // GA10x: 48 warps and 16 blocks per SM, 100 KiB per SM, 99 KiB per block
      s.maxThreadsPerSm = 1536, s.maxBlocksPerSm = 16;
      s.smemPerSm = 100 * KiB, s.smemPerBlockOptin = 99 * KiB, s.smemReservedPerBlock = KiB;
      break;
    case 89:  // Ada: as GA10x but 24 blocks per SM
      s.maxThreadsPerSm = 1536, s.maxBlocksPerSm = 24;
      s.smemPerSm = 100 * KiB, s.smemPerBlockOptin = 99 * KiB, s.smemReservedPerBlock = KiB;
      break;
    case 90:  // Hopper: 228 KiB per SM, 227 KiB per block
      s.maxThreadsPerSm = 2048, s.maxBlocksPerSm = 32;
      s.smemPerSm = 228 * KiB, s.smemPerBlockOptin = 227 * KiB, s.smemReservedPerBlock = KiB;
      break;
  }
  return s;
}

struct Board {
  const char* name;
  int smCount, clockMhz, memClockMhz, busBits, l2KiB;
  std::int64_t memBytes;
};

GpuProfile profile(const char* key, int major, int minor, const Board& b, const char* source) {
  GpuSpec s = computeCapability(major, minor);
  s.name = b.name;
  s.profile = key;
  s.smCount = b.smCount;
  s.clockKhz = b.clockMhz * 1000;
  s.memClockKhz = b.memClockMhz * 1000;
  s.memBusWidthBits = b.busBits;
  s.l2Bytes = b.l2KiB * KiB;
  s.totalMemBytes = b.memBytes;
  return {key, std::move(s), source};
}

std::vector<GpuProfile> makeProfiles() {
  return {
      profile("h100", 9, 0, {"NVIDIA H100 80GB HBM3", 132, 1980, 2619, 5120, 50 * KiB, 80 * GiB},
              "NVIDIA H100 Tensor Core GPU Architecture whitepaper (SXM5: 132 SMs, 50 MB L2, HBM3 "
              "5120-bit); sm_90 limits from the CUDA programming guide"),
      profile("h200", 9, 0, {"NVIDIA H200", 132, 1980, 3125, 6144, 50 * KiB, 141LL * 1000 * 1000 * 1000},
              "NVIDIA H200 datasheet (SXM: 141 GB HBM3e, 4.8 TB/s = 6144-bit at 3125 MHz DDR); same "
              "GH100 die as H100; sm_90 limits from the CUDA programming guide"),
      profile("a100", 8, 0, {"NVIDIA A100-SXM4-80GB", 108, 1410, 1593, 5120, 40 * KiB, 80 * GiB},
              "NVIDIA A100 Tensor Core GPU Architecture whitepaper and A100 80GB datasheet (108 SMs, "
              "40 MB L2, 2039 GB/s HBM2e); sm_80 limits from the CUDA programming guide"),
      profile("a6000", 8, 6, {"NVIDIA RTX A6000", 84, 1800, 8001, 384, 6 * KiB, 48 * GiB},
              "NVIDIA RTX A6000 datasheet (84 SMs, 48 GB GDDR6 384-bit, 768 GB/s) and Ampere GA102 "
              "whitepaper (6 MB L2); sm_86 limits from the CUDA programming guide"),
      profile("l4", 8, 9, {"NVIDIA L4", 58, 2040, 6251, 192, 48 * KiB, 24 * GiB},
              "NVIDIA L4 datasheet (24 GB GDDR6 192-bit, 300 GB/s) and Ada AD104 whitepaper (58 SMs "
              "enabled, 48 MB L2); sm_89 limits from the CUDA programming guide"),
      profile("rtx4090", 8, 9, {"NVIDIA GeForce RTX 4090", 128, 2520, 10501, 384, 72 * KiB, 24 * GiB},
              "NVIDIA Ada Lovelace architecture whitepaper (RTX 4090: 128 SMs, 72 MB L2, 24 GB GDDR6X "
              "384-bit at 21 Gbps); sm_89 limits from the CUDA programming guide"),
      profile("t4", 7, 5, {"Tesla T4", 40, 1590, 5001, 256, 4 * KiB, 16 * GiB},
              "NVIDIA T4 datasheet and Turing TU104 whitepaper (40 SMs, 4 MB L2, 16 GB GDDR6 256-bit, "
              "320 GB/s); sm_75 limits from the CUDA programming guide"),
      profile("v100", 7, 0, {"Tesla V100-SXM2-16GB", 80, 1530, 877, 4096, 6 * KiB, 16 * GiB},
              "NVIDIA Tesla V100 GPU Architecture whitepaper (SXM2: 80 SMs, 6 MB L2, 16 GB HBM2 "
              "4096-bit, 900 GB/s); sm_70 limits from the CUDA programming guide"),
  };
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

const std::vector<GpuProfile>& gpuProfiles() {
  static const std::vector<GpuProfile> profiles = makeProfiles();
  return profiles;
}

const GpuProfile* findGpuProfile(std::string_view key) {
  const std::string k = lower(key);
  for (const auto& p : gpuProfiles())
    if (p.key == k) return &p;
  return nullptr;
}

std::string gpuProfileKeys() {
  std::string out;
  for (const auto& p : gpuProfiles()) out += (out.empty() ? "" : ", ") + p.key;
  return out;
}

}  // namespace gemmtune
