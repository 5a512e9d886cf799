// WorkerModule: a worker's own CUDA source (helper or accuracy kernels) compiled with NVRTC for
// the worker's GPU, loaded into the current context, its entry points resolved.
#pragma once

#include <cuda.h>

#include <initializer_list>
#include <string>

namespace gemmtune {

struct WorkerEntry {
  CUfunction* fn;
  const char* name;
};

// What every worker kernel source starts with: u64, mix64 (a counter-based hash for inputs drawn
// from (seed, index)), and firstIndex()/stride() for grid-stride loops.
const char* workerKernelPrelude();

// Throws std::runtime_error naming `what` with NVRTC's log when the source does not compile, and
// CudaError when the module does not load or lacks an entry (nothing stays loaded then).
CUmodule loadWorkerModule(const std::string& source, const char* anchorKernel, const std::string& arch, const char* what,
                          std::initializer_list<WorkerEntry> entries);

// The worker kernels' grid-stride launch: kWorkerThreads per block, enough blocks to fill the GPU
// a few times over (at most kWorkerBlocksPerSm per SM), the kernels stride over the rest.
inline constexpr int kWorkerThreads = 256;
inline constexpr int kWorkerBlocksPerSm = 8;
long long gridStrideBlocks(long long n, int smCount);
// Throws CudaError with `what` when the launch fails.
void launchGridStride(CUfunction f, long long n, void** args, CUstream stream, int smCount, const char* what);

}  // namespace gemmtune
