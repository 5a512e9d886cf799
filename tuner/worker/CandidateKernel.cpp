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

int funcAttr(const LoadedKernel& k, CUfunction_attribute a) {
  try {
    return k.attribute(a);
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

CandidateKernel::CandidateKernel(const std::string& cubin, const std::string& loweredName, Dim3 grid, Dim3 block,
                                 int dynamicSmemBytes, CUdevice device)
    : grid_(grid), block_(block) {
  checkGeometry(device, grid, block);
  const int optin = devAttr(device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  if (dynamicSmemBytes < 0 || dynamicSmemBytes > optin)
    throw LaunchRefused(CUDA_SUCCESS, fmt::format("{} B dynamic shared memory: the GPU allows at most {} B per block",
                                                  dynamicSmemBytes, optin));
  if (cubin.empty()) throw LaunchRefused(CUDA_SUCCESS, "empty cubin");
  try {
    kernel_ = std::make_unique<LoadedKernel>(cubin, loweredName, dynamicSmemBytes);
  } catch (const CudaError& e) {
    throw LaunchRefused(e.result, fmt::format("loading {}: {}", loweredName, e.what()));
  }

  const long long threads = static_cast<long long>(block.x) * block.y * block.z;
  const int maxThreads = funcAttr(*kernel_, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  if (threads > maxThreads)
    throw LaunchRefused(CUDA_SUCCESS, fmt::format("block of {} threads: this kernel allows at most {} ({} registers per thread)",
                                                  threads, maxThreads, funcAttr(*kernel_, CU_FUNC_ATTRIBUTE_NUM_REGS)));
  const int staticSmem = funcAttr(*kernel_, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
  if (static_cast<long long>(staticSmem) + dynamicSmemBytes > optin)
    throw LaunchRefused(CUDA_SUCCESS, fmt::format("needs {} B static + {} B dynamic shared memory: the GPU allows {} B per block",
                                                  staticSmem, dynamicSmemBytes, optin));
}

void CandidateKernel::launch(CUstream stream, SgemmArgs a) const {
  void* params[] = {&a.m, &a.n, &a.k, &a.alpha, &a.a, &a.lda, &a.b, &a.ldb, &a.beta, &a.c, &a.ldc};
  const auto& cu = CudaDriver::get();
  if (CUresult r = cu.cuLaunchKernel(kernel_->function(), grid_.x, grid_.y, grid_.z, block_.x, block_.y, block_.z,
                                     static_cast<unsigned>(kernel_->dynamicSmemBytes()), stream, params, nullptr);
      r != CUDA_SUCCESS)
    throw LaunchRefused(r, fmt::format("cuLaunchKernel: {}", cu.describe(r)));
}

}  // namespace gemmtune
