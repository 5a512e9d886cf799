#include "CandidateKernel.hpp"

#include <fmt/format.h>

#include "CudaDriver.hpp"

namespace gemmtune {

namespace {

int devAttr(CUdevice d, CUdevice_attribute a) {
  const auto& cu = CudaDriver::get();
  int v = 0;
  if (CUresult r = cu.cuDeviceGetAttribute(&v, a, d); r != CUDA_SUCCESS)
    throw LaunchRefused(r, fmt::format("cuDeviceGetAttribute: {}", cu.describe(r)));
  return v;
}

int funcAttr(const LoadedKernel& k, CUfunction_attribute a, size_t kernel) {
  try {
    return k.attribute(a, kernel);
  } catch (const CudaError& e) {
    throw LaunchRefused(e.result, e.what());
  }
}

void checkGeometry(CUdevice d, Dim3 grid, Dim3 block) {
  const unsigned b[3] = {block.x, block.y, block.z}, g[3] = {grid.x, grid.y, grid.z};
  const CUdevice_attribute blockMax[3] = {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y,
                                          CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z};
  const CUdevice_attribute gridMax[3] = {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,
                                         CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z};
  for (int i = 0; i < 3; ++i) {
    const auto bmax = static_cast<unsigned>(devAttr(d, blockMax[i])), gmax = static_cast<unsigned>(devAttr(d, gridMax[i]));
    if (b[i] < 1 || b[i] > bmax)
      throw LaunchRefused(CUDA_SUCCESS, fmt::format("block dimension {} is {}: the GPU allows 1..{}", "xyz"[i], b[i], bmax));
    if (g[i] < 1 || g[i] > gmax)
      throw LaunchRefused(CUDA_SUCCESS, fmt::format("grid dimension {} is {}: the GPU allows 1..{}", "xyz"[i], g[i], gmax));
  }
}

}  // namespace

CandidateKernel::CandidateKernel(const std::string& cubin, const std::vector<std::string>& loweredNames, CUdevice device)
    : kernelCount_(loweredNames.size()), device_(device), workspace_(CudaDriver::get()) {
  if (cubin.empty()) throw LaunchRefused(CUDA_SUCCESS, "empty cubin");
  try {
    kernel_ = std::make_unique<LoadedKernel>(cubin, loweredNames);
  } catch (const CudaError& e) {
    throw LaunchRefused(e.result, fmt::format("loading {}: {}", loweredNames.empty() ? "" : loweredNames[0], e.what()));
  }
}

void CandidateKernel::admit(const LaunchPlan& plan) const {
  if (!plan.runnable()) throw LaunchRefused(CUDA_SUCCESS, "the plan refuses this problem: " + plan.refusal);
  const int optin = devAttr(device_, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  for (const KernelLaunch& l : plan.launches) {
    checkGeometry(device_, l.grid, l.block);
    if (l.dynamicSmemBytes < 0 || l.dynamicSmemBytes > optin)
      throw LaunchRefused(CUDA_SUCCESS, fmt::format("{} B dynamic shared memory: the GPU allows at most {} B per block",
                                                    l.dynamicSmemBytes, optin));
    if (l.kernel < 0 || static_cast<size_t>(l.kernel) >= kernelCount_)
      throw LaunchRefused(CUDA_SUCCESS, fmt::format("the plan launches kernel {} of {}", l.kernel, kernelCount_));
    const auto k = static_cast<size_t>(l.kernel);
    const long long threads = static_cast<long long>(l.block.x) * l.block.y * l.block.z;
    const int maxThreads = funcAttr(*kernel_, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, k);
    if (threads > maxThreads)
      throw LaunchRefused(CUDA_SUCCESS, fmt::format("block of {} threads: this kernel allows at most {} ({} registers per thread)",
                                                    threads, maxThreads, funcAttr(*kernel_, CU_FUNC_ATTRIBUTE_NUM_REGS, k)));
    const int staticSmem = funcAttr(*kernel_, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, k);
    if (static_cast<long long>(staticSmem) + l.dynamicSmemBytes > optin)
      throw LaunchRefused(CUDA_SUCCESS, fmt::format("needs {} B static + {} B dynamic shared memory: the GPU allows {} B per block",
                                                    staticSmem, l.dynamicSmemBytes, optin));
  }
}

void CandidateKernel::launch(CUstream stream, const LaunchPlan& plan, const SgemmArgs& a) {
  const auto& cu = CudaDriver::get();
  if (CUresult r = kernel_->run(plan, a, stream, &workspace_); r != CUDA_SUCCESS)
    throw LaunchRefused(r, fmt::format("cuLaunchKernel: {}", cu.describe(r)));
}

}  // namespace gemmtune
