// LoadedKernel: the kernels of one compiled configuration (one cubin, one entry point per kernel
// of its launch plan) loaded into the current CUDA context, and run as a plan says.
// Load failures throw CudaError (code kept); runs return the CUresult so the caller decides by
// code whether it was a launch error or a fault.
#pragma once

#include <cuda.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "CudaDriver.hpp"
#include "LaunchArgs.hpp"
#include "Workspace.hpp"
#include "LaunchPlan.hpp"

namespace gemmtune {

class LoadedKernel {
 public:
  // Loads `cubin` (needs a current context) and resolves every entry point in `loweredNames`
  // (kernel i of the plans is loweredNames[i]). `driver` is kept for unloading: a kernel owned by
  // a static object may outlive CudaDriver::get()'s instance at process exit, so such owners pass
  // their own driver copy.
  LoadedKernel(const std::string& cubin, const std::vector<std::string>& loweredNames,
               const CudaDriver& driver = CudaDriver::get());
  ~LoadedKernel();
  LoadedKernel(const LoadedKernel&) = delete;
  LoadedKernel& operator=(const LoadedKernel&) = delete;

  size_t kernels() const { return functions_.size(); }
  CUfunction function(size_t kernel = 0) const { return functions_.at(kernel); }
  int attribute(CUfunction_attribute which, size_t kernel = 0) const;  // throws CudaError
  // Resident blocks per SM as the driver computes them for the main kernel.
  int driverBlocksPerSm(int threadsPerBlock, int dynamicSmemBytes) const;

  // The grid `launch` runs with: its own, or for a one-wave launch (KernelLaunch::oneWave) at most
  // as many blocks as the GPU holds at once (SMs × the driver's blocks per SM for its block and
  // shared memory, counted once per kernel). Throws CudaError.
  Dim3 gridOf(const KernelLaunch& launch) const;

  // Every launch of `plan` in order on `stream`; the first failure's code, else CUDA_SUCCESS.
  // Opts in to dynamic shared memory above the function's default limit when a launch needs it.
  // `workspace` supplies the plan's workspace (LaunchPlan::workspaceBytes) in place of
  // args.workspace; without one, a plan that needs it runs only with args.workspace set.
  CUresult run(const LaunchPlan& plan, const SgemmArgs& args, CUstream stream = nullptr,
               Workspace* workspace = nullptr) const;

 private:
  CUresult allowDynamicSmem(size_t kernel, int bytes) const;

  const CudaDriver& driver_;
  CUmodule module_ = nullptr;
  std::vector<CUfunction> functions_;
  // The dynamic shared memory each function may use now (raised on demand, never lowered).
  std::unique_ptr<std::atomic<int>[]> allowedSmem_;
  mutable std::mutex raiseMutex_;
  // Blocks one wave of each function holds (0: not yet asked); a plan's block and shared memory
  // are fixed per program, so one count per function.
  std::unique_ptr<std::atomic<long long>[]> waveBlocks_;
};

}  // namespace gemmtune
