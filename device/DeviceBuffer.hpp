// DeviceBuffer: one cuMemAlloc allocation in the current context, freed on destruction.
#pragma once

#include <cuda.h>

#include <cstddef>

namespace gemmtune {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);  // throws CudaError (CUDA_ERROR_OUT_OF_MEMORY, ...)
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  CUdeviceptr ptr() const { return ptr_; }
  size_t bytes() const { return bytes_; }
  void upload(const void* host, size_t bytes);
  void download(void* host, size_t bytes) const;
  void fill32(unsigned value);  // every 32-bit word, e.g. a NaN pattern

 private:
  void release() noexcept;
  CUdeviceptr ptr_ = 0;
  size_t bytes_ = 0;
};

}  // namespace gemmtune
