#include "DeviceBuffer.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <utility>

#include "CudaDriver.hpp"

namespace gemmtune {

namespace {
void checkFits(size_t want, size_t have, const char* what) {
  if (want > have) throw std::out_of_range(fmt::format("{} of {} B exceeds the {} B buffer", what, want, have));
}
}  // namespace

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  const CudaDriver& d = CudaDriver::get();
  d.check(d.cuMemAlloc(&ptr_, bytes), "cuMemAlloc");
}

DeviceBuffer::~DeviceBuffer() { release(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept
    : ptr_(std::exchange(o.ptr_, 0)), bytes_(std::exchange(o.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    release();
    ptr_ = std::exchange(o.ptr_, 0);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::release() noexcept {
  if (ptr_) CudaDriver::get().cuMemFree(ptr_);
  ptr_ = 0;
}

void DeviceBuffer::upload(const void* host, size_t bytes) {
  checkFits(bytes, bytes_, "upload");
  const CudaDriver& d = CudaDriver::get();
  d.check(d.cuMemcpyHtoD(ptr_, host, bytes), "cuMemcpyHtoD");
}

void DeviceBuffer::download(void* host, size_t bytes) const {
  checkFits(bytes, bytes_, "download");
  const CudaDriver& d = CudaDriver::get();
  d.check(d.cuMemcpyDtoH(host, ptr_, bytes), "cuMemcpyDtoH");
}

void DeviceBuffer::fill32(unsigned value) {
  const CudaDriver& d = CudaDriver::get();
  d.check(d.cuMemsetD32(ptr_, value, bytes_ / 4), "cuMemsetD32");
}

}  // namespace gemmtune
