#include "WorkerModule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "CudaDriver.hpp"
#include "NvrtcCompiler.hpp"

namespace gemmtune {

const char* workerKernelPrelude() {
  return R"CUDA(
typedef unsigned long long u64;

__device__ __forceinline__ u64 mix64(u64 x) {  // splitmix64 finalizer
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
__device__ __forceinline__ long long firstIndex() { return blockIdx.x * (long long)blockDim.x + threadIdx.x; }
__device__ __forceinline__ long long stride() { return (long long)gridDim.x * blockDim.x; }
)CUDA";
}

CUmodule loadWorkerModule(const std::string& source, const char* anchorKernel, const std::string& arch, const char* what,
                          std::initializer_list<WorkerEntry> entries) {
  CompileResult r = NvrtcCompiler::compile(source, anchorKernel, arch);
  if (!r.ok) throw std::runtime_error(fmt::format("{} do not compile for {}:\n{}", what, arch, r.log));
  const auto& cu = CudaDriver::get();
  CUmodule module = nullptr;
  cu.check(cu.cuModuleLoadData(&module, r.cubin.data()), fmt::format("loading the {}", what).c_str());
  for (const WorkerEntry& e : entries) {
    if (CUresult status = cu.cuModuleGetFunction(e.fn, module, e.name); status != CUDA_SUCCESS) {
      cu.cuModuleUnload(module);
      cu.check(status, e.name);
    }
  }
  return module;
}

long long gridStrideBlocks(long long n, int smCount) {
  return std::clamp<long long>((n + kWorkerThreads - 1) / kWorkerThreads, 1,
                               static_cast<long long>(kWorkerBlocksPerSm) * std::max(smCount, 1));
}

void launchGridStride(CUfunction f, long long n, void** args, CUstream stream, int smCount, const char* what) {
  const auto& cu = CudaDriver::get();
  cu.check(cu.cuLaunchKernel(f, static_cast<unsigned>(gridStrideBlocks(n, smCount)), 1, 1, kWorkerThreads, 1, 1, 0,
                             stream, args, nullptr),
           what);
}

}  // namespace gemmtune
