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

}  // namespace gemmtune
