#include "Workspace.hpp"

#include <algorithm>

#include "CaptureMode.hpp"
#include "LaunchPlan.hpp"
#include "CudaDriver.hpp"

namespace gemmtune {

Workspace::~Workspace() {
  if (current_) driver_.cuMemFree(current_);
  for (CUdeviceptr p : retired_) driver_.cuMemFree(p);
}

CUresult Workspace::reserve(long long bytes, CUstream stream, CUdeviceptr& ptr) {
  ptr = 0;
  if (bytes <= 0) return CUDA_SUCCESS;
  std::lock_guard lock(mutex_);
  if (bytes > bytes_) {
    // Rounded up to whole words and at least doubled: a few growths cover a whole workload. Past the
    // zeroed prefix (scratch of gigabytes: fp16x3) exactly what is asked, since outgrown memory is
    // kept until this object goes.
    const long long words = (bytes + 3) / 4 * 4;
    const long long want = words > kZeroedWorkspaceBytes ? words : std::max(words, 2 * bytes_);
    CUdeviceptr p = 0;
    CUresult allocated = CUDA_SUCCESS;
    {
      RelaxedCaptureMode relaxed(driver_);  // another thread's capture must not forbid it
      allocated = driver_.cuMemAlloc(&p, static_cast<size_t>(want));
    }
    if (allocated != CUDA_SUCCESS) return allocated;
    if (CUresult r = driver_.cuMemsetD32Async(p, 0, static_cast<size_t>(want / 4), stream); r != CUDA_SUCCESS) {
      driver_.cuMemFree(p);
      return r;
    }
    if (current_) retired_.push_back(current_);
    current_ = p;
    bytes_ = want;
  }
  ptr = current_;
  return CUDA_SUCCESS;
}

}  // namespace gemmtune
