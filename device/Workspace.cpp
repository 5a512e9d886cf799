#include "Workspace.hpp"

#include <algorithm>

#include "CudaDriver.hpp"

namespace gemmtune {

Workspace::~Workspace() {
  if (current_) driver_.cuMemFree(current_);
  for (CUdeviceptr p : retired_) driver_.cuMemFree(p);
}

CUdeviceptr Workspace::reserve(long long bytes, CUstream stream) {
  if (bytes <= 0) return 0;
  if (bytes <= bytes_) return current_;
  // Rounded up to whole words and at least doubled: a few growths cover a whole workload.
  const long long want = std::max((bytes + 3) / 4 * 4, 2 * bytes_);
  CUdeviceptr p = 0;
  driver_.check(driver_.cuMemAlloc(&p, static_cast<size_t>(want)), "cuMemAlloc (launch plan workspace)");
  if (CUresult r = driver_.cuMemsetD32Async(p, 0, static_cast<size_t>(want / 4), stream); r != CUDA_SUCCESS) {
    driver_.cuMemFree(p);
    driver_.check(r, "cuMemsetD32Async (launch plan workspace)");
  }
  if (current_) retired_.push_back(current_);
  current_ = p;
  bytes_ = want;
  return current_;
}

}  // namespace gemmtune
