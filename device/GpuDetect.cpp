#include "GpuDetect.hpp"

#include <fmt/format.h>

#include <charconv>
#include <optional>

#include "CudaDriver.hpp"
#include "GpuProfiles.hpp"
#include "gemmtune/Errors.hpp"

namespace gemmtune {

namespace {

std::string uuidString(const CUuuid& u) {
  std::string out = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += fmt::format("{:02x}", static_cast<unsigned char>(u.bytes[i]));
  }
  return out;
}

std::string choices(int deviceCount) {
  std::string out = "auto, all";
  if (deviceCount == 1) out += ", 0";
  if (deviceCount > 1) out += fmt::format(", 0..{}", deviceCount - 1);
  return out + ", " + gpuProfileKeys();
}

int visibleDevicesOrZero() {
  try {
    return cudaDeviceCount();
  } catch (const NoGpuError&) {
    return 0;
  }
}

std::optional<int> parseIndex(std::string_view s) {
  int v = -1;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

}  // namespace

int cudaDeviceCount() {
  const CudaDriver& d = CudaDriver::get();
  int n = 0;
  if (CUresult r = d.cuDeviceGetCount(&n); r != CUDA_SUCCESS)
    throw NoGpuError(fmt::format("no CUDA GPU: cuDeviceGetCount failed: {}", d.describe(r)));
  if (n == 0) throw NoGpuError("no CUDA GPU visible (check CUDA_VISIBLE_DEVICES)");
  return n;
}

int currentContextOrdinal() {
  const CudaDriver& d = CudaDriver::get();
  CUdevice device = 0;
  d.check(d.cuCtxGetDevice(&device), "cuCtxGetDevice");
  int count = 0;
  d.check(d.cuDeviceGetCount(&count), "cuDeviceGetCount");
  for (int i = 0; i < count; ++i) {
    CUdevice candidate = 0;
    if (d.cuDeviceGet(&candidate, i) == CUDA_SUCCESS && candidate == device) return i;
  }
  throw CudaError(CUDA_ERROR_INVALID_DEVICE, fmt::format("the current context's device {} has no ordinal", device));
}

GpuSpec queryGpu(int ordinal) {
  const CudaDriver& d = CudaDriver::get();
  const int count = cudaDeviceCount();
  if (ordinal < 0 || ordinal >= count)
    throw UsageError(fmt::format("GPU index {} out of range: {} GPU(s) visible (choose from: {})", ordinal, count, choices(count)));
  CUdevice dev = 0;
  d.check(d.cuDeviceGet(&dev, ordinal), "cuDeviceGet");
  auto attr = [&](CUdevice_attribute a) {
    int v = 0;
    d.check(d.cuDeviceGetAttribute(&v, a, dev), "cuDeviceGetAttribute");
    return v;
  };
  GpuSpec s;
  char name[256] = {};
  d.check(d.cuDeviceGetName(name, sizeof name, dev), "cuDeviceGetName");
  s.name = name;
  s.deviceIndex = ordinal;
  s.ccMajor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  s.ccMinor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  s.smCount = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  s.maxThreadsPerBlock = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  s.maxThreadsPerSm = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  s.maxBlocksPerSm = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
  s.warpSize = attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  s.regsPerSm = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
  s.regsPerBlock = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
  // Not a driver attribute: 255 (the ISA's limit) and warp-granular allocation in units of 256
  // hold for every architecture since sm_30 (cuda_occupancy.h).
  s.maxRegsPerThread = 255;
  s.regAllocUnit = 256;
  s.smemPerSm = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  s.smemPerBlock = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  s.smemPerBlockOptin = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  s.smemReservedPerBlock = attr(CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK);
  s.maxGridDimX = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
  s.maxGridDimY = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
  s.maxGridDimZ = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
  s.l2Bytes = attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  s.memClockKhz = attr(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
  s.memBusWidthBits = attr(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  s.clockKhz = attr(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  size_t bytes = 0;
  d.check(d.cuDeviceTotalMem(&bytes, dev), "cuDeviceTotalMem");
  s.totalMemBytes = static_cast<std::int64_t>(bytes);
  CUuuid uuid{};
  d.check(d.cuDeviceGetUuid(&uuid, dev), "cuDeviceGetUuid");
  s.uuid = uuidString(uuid);
  return s;
}

std::vector<GpuSpec> detectGpus() {
  std::vector<GpuSpec> out;
  const int n = visibleDevicesOrZero();
  for (int i = 0; i < n; ++i) out.push_back(queryGpu(i));
  return out;
}

std::vector<GpuSpec> resolveGpus(std::string_view selector) {
  if (const GpuProfile* p = findGpuProfile(selector)) return {p->spec};
  const bool wantsDevice = selector == "auto" || selector == "all" || parseIndex(selector);
  if (!wantsDevice)
    throw UsageError(fmt::format("unknown GPU '{}' (choose from: {})", selector, choices(visibleDevicesOrZero())));
  try {
    if (selector == "auto") return {queryGpu(0)};
    if (selector == "all") {
      std::vector<GpuSpec> out;
      for (int i = 0, n = cudaDeviceCount(); i < n; ++i) out.push_back(queryGpu(i));
      return out;
    }
    return {queryGpu(*parseIndex(selector))};
  } catch (const NoGpuError& e) {
    throw NoGpuError(fmt::format("no CUDA GPU for --gpu {}: {}; offline profiles work without one: {}", selector,
                                 e.what(), gpuProfileKeys()));
  }
}

GpuSpec resolveGpu(std::string_view selector) {
  if (selector == "all")
    throw UsageError(fmt::format("this command takes one GPU, not 'all' (choose from: {})", choices(visibleDevicesOrZero())));
  return resolveGpus(selector).front();
}

std::string defaultArch() {
  if (!CudaDriver::available()) return "sm_90";
  try {
    return queryGpu(0).arch();
  } catch (const Error&) {
    return "sm_90";
  }
}

}  // namespace gemmtune
