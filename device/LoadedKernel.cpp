#include "LoadedKernel.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gemmtune {

LoadedKernel::LoadedKernel(const std::string& cubin, const std::vector<std::string>& loweredNames,
                           const CudaDriver& driver)
    : driver_(driver),
      allowedSmem_(std::make_unique<std::atomic<int>[]>(loweredNames.size())),
      waveBlocks_(std::make_unique<std::atomic<long long>[]>(loweredNames.size())) {
  const CudaDriver& d = driver_;
  if (loweredNames.empty()) throw CudaError(CUDA_ERROR_NOT_FOUND, "no kernel named to load");
  d.check(d.cuModuleLoadData(&module_, cubin.data()), "cuModuleLoadData");
  try {
    for (size_t i = 0; i < loweredNames.size(); ++i) {
      CUfunction f = nullptr;
      d.check(d.cuModuleGetFunction(&f, module_, loweredNames[i].c_str()),
              fmt::format("cuModuleGetFunction({})", loweredNames[i]).c_str());
      functions_.push_back(f);
      allowedSmem_[i] = attribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, i);
    }
  } catch (...) {
    d.cuModuleUnload(module_);
    throw;
  }
}

LoadedKernel::~LoadedKernel() {
  if (module_) driver_.cuModuleUnload(module_);
}

int LoadedKernel::attribute(CUfunction_attribute which, size_t kernel) const {
  const CudaDriver& d = driver_;
  int v = 0;
  d.check(d.cuFuncGetAttribute(&v, which, functions_.at(kernel)), "cuFuncGetAttribute");
  return v;
}

int LoadedKernel::driverBlocksPerSm(int threadsPerBlock, int dynamicSmemBytes) const {
  const CudaDriver& d = driver_;
  // The driver counts zero blocks for more dynamic shared memory than the function may use yet.
  d.check(allowDynamicSmem(0, dynamicSmemBytes), "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
  int blocks = 0;
  d.check(d.cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, functions_.at(0), threadsPerBlock,
                                                        static_cast<size_t>(dynamicSmemBytes)),
          "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  return blocks;
}

CUresult LoadedKernel::allowDynamicSmem(size_t kernel, int bytes) const {
  // The default is 48 KiB minus the static shared memory; above it needs the opt-in, up to the
  // device's opt-in maximum (the limits rule refuses beyond it).
  if (bytes <= allowedSmem_[kernel].load(std::memory_order_acquire)) return CUDA_SUCCESS;
  // Raised under a lock: two threads raising to different values must not leave the cached limit
  // above the driver's.
  std::lock_guard lock(raiseMutex_);
  if (bytes <= allowedSmem_[kernel].load(std::memory_order_relaxed)) return CUDA_SUCCESS;
  CUresult r = driver_.cuFuncSetAttribute(functions_[kernel], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes);
  if (r == CUDA_SUCCESS) allowedSmem_[kernel].store(bytes, std::memory_order_release);
  return r;
}

Dim3 LoadedKernel::gridOf(const KernelLaunch& l) const {
  if (!l.oneWave) return l.grid;
  const auto kernel = static_cast<size_t>(l.kernel);
  long long wave = waveBlocks_[kernel].load(std::memory_order_relaxed);
  if (wave == 0) {
    const CudaDriver& d = driver_;
    d.check(allowDynamicSmem(kernel, l.dynamicSmemBytes), "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
    int perSm = 0, sms = 0;
    d.check(d.cuOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, functions_.at(kernel),
                                                          static_cast<int>(l.block.volume()),
                                                          static_cast<size_t>(l.dynamicSmemBytes)),
            "cuOccupancyMaxActiveBlocksPerMultiprocessor");
    CUdevice device = 0;
    d.check(d.cuCtxGetDevice(&device), "cuCtxGetDevice");
    d.check(d.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device), "cuDeviceGetAttribute");
    wave = std::max(1LL, static_cast<long long>(sms) * perSm);
    waveBlocks_[kernel].store(wave, std::memory_order_relaxed);
  }
  Dim3 grid = l.grid;
  grid.x = static_cast<unsigned>(std::min<long long>(grid.x, wave));
  return grid;
}

CUresult LoadedKernel::run(const LaunchPlan& plan, const SgemmArgs& given, CUstream stream, Workspace* workspace) const {
  SgemmArgs args = given;
  if (workspace)
    if (CUresult r = workspace->reserve(plan.workspaceBytes, stream, args.workspace); r != CUDA_SUCCESS) return r;
  if (!plan.runnable() || (plan.workspaceBytes > 0 && !args.workspace)) return CUDA_ERROR_INVALID_VALUE;
  for (const KernelLaunch& l : plan.launches) {
    if (l.kernel < 0 || static_cast<size_t>(l.kernel) >= functions_.size()) return CUDA_ERROR_NOT_FOUND;
    const auto kernel = static_cast<size_t>(l.kernel);
    if (CUresult r = allowDynamicSmem(kernel, l.dynamicSmemBytes); r != CUDA_SUCCESS) return r;
    ArgumentPack pack(l, args);
    Dim3 grid;
    try {
      grid = gridOf(l);
    } catch (const CudaError& e) {
      return e.result;
    }
    if (CUresult r = driver_.cuLaunchKernel(functions_[kernel], grid.x, grid.y, grid.z, l.block.x, l.block.y,
                                            l.block.z, static_cast<unsigned>(l.dynamicSmemBytes), stream,
                                            pack.pointers(), nullptr);
        r != CUDA_SUCCESS)
      return r;
  }
  return CUDA_SUCCESS;
}

}  // namespace gemmtune
