#include "Workspace.hpp"

#include <algorithm>

#include "CaptureMode.hpp"
#include "LaunchPlan.hpp"
#include "CudaDriver.hpp"

namespace gemmtune {

Workspace::~Workspace() {
  if (current_) driver_.cuMemFree(current_);
  for (const Retired& r : retired_) {
    if (r.done) driver_.cuEventSynchronize(r.done), driver_.cuEventDestroy(r.done);
    driver_.cuMemFree(r.ptr);
  }
}

void Workspace::freeFinished() {
  // Only retirements with an event can finish; the rest wait for the destructor, and must not cost
  // every launch a driver call.
  if (std::none_of(retired_.begin(), retired_.end(), [](const Retired& r) { return r.done != nullptr; })) return;
  RelaxedCaptureMode relaxed(driver_);  // another thread's capture must not forbid it
  std::erase_if(retired_, [&](const Retired& r) {
    if (!r.done || driver_.cuEventQuery(r.done) != CUDA_SUCCESS) return false;
    driver_.cuEventDestroy(r.done);
    driver_.cuMemFree(r.ptr);
    return true;
  });
}

CUresult Workspace::retireCurrent(CUstream stream) {
  Retired r{current_, nullptr};
  CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
  if (driver_.cuStreamIsCapturing(stream, &capture) == CUDA_SUCCESS && capture == CU_STREAM_CAPTURE_STATUS_NONE) {
    RelaxedCaptureMode relaxed(driver_);
    if (CUresult e = driver_.cuEventCreate(&r.done, CU_EVENT_DISABLE_TIMING); e != CUDA_SUCCESS) return e;
    if (CUresult e = driver_.cuEventRecord(r.done, stream); e != CUDA_SUCCESS) {
      driver_.cuEventDestroy(r.done);
      return e;
    }
  }
  retired_.push_back(r);
  current_ = 0;
  bytes_ = 0;
  return CUDA_SUCCESS;
}

CUresult Workspace::reserve(long long bytes, CUstream stream, CUdeviceptr& ptr) {
  ptr = 0;
  if (bytes <= 0) return CUDA_SUCCESS;
  std::lock_guard lock(mutex_);
  if (!retired_.empty()) freeFinished();
  if (bytes > bytes_) {
    // Rounded up to whole words and grown geometrically, so that a few growths cover a workload
    // and what is retired meanwhile stays within a small multiple of the largest need: doubled
    // within the zeroed prefix, half as much again past it (scratch of gigabytes: fp16x3).
    const long long words = (bytes + 3) / 4 * 4;
    const long long grown = words > kZeroedWorkspaceBytes ? bytes_ + bytes_ / 2 : 2 * bytes_;
    const long long want = std::max(words, grown);
    CUdeviceptr p = 0;
    CUresult allocated = CUDA_SUCCESS;
    {
      RelaxedCaptureMode relaxed(driver_);
      allocated = driver_.cuMemAlloc(&p, static_cast<size_t>(want));
    }
    if (allocated != CUDA_SUCCESS) return allocated;
    const long long zeroed = std::min(want, kZeroedWorkspaceBytes);
    if (CUresult r = driver_.cuMemsetD32Async(p, 0, static_cast<size_t>(zeroed / 4), stream); r != CUDA_SUCCESS) {
      driver_.cuMemFree(p);
      return r;
    }
    if (current_)
      if (CUresult r = retireCurrent(stream); r != CUDA_SUCCESS) {
        driver_.cuMemFree(p);
        return r;
      }
    current_ = p;
    bytes_ = want;
  }
  ptr = current_;
  return CUDA_SUCCESS;
}

}  // namespace gemmtune
