#include "GpuContext.hpp"

#include <fmt/format.h>

#include "gemmtune/Errors.hpp"

namespace gemmtune {

int GpuContext::checkedIndex(int gpuIndex) {
  const auto& cu = CudaDriver::get();
  int count = 0;
  cu.check(cu.cuDeviceGetCount(&count), "cuDeviceGetCount");
  if (gpuIndex < 0 || gpuIndex >= count)
    throw UsageError(fmt::format("GPU {} does not exist: {} GPU(s) visible (indices 0..{})", gpuIndex, count, count - 1));
  return gpuIndex;
}

GpuContext::GpuContext(int gpuIndex) : cu_(CudaDriver::get()), index_(checkedIndex(gpuIndex)), primary_(index_) {
  cu_.check(cu_.cuStreamCreate(&stream_, CU_STREAM_DEFAULT), "cuStreamCreate");
}

GpuContext::~GpuContext() {
  if (stream_) cu_.cuStreamDestroy(stream_);
}

int GpuContext::attribute(CUdevice_attribute a) const {
  int v = 0;
  cu_.check(cu_.cuDeviceGetAttribute(&v, a, device()), "cuDeviceGetAttribute");
  return v;
}

void GpuContext::sync() const { cu_.check(cu_.cuStreamSynchronize(stream_), "cuStreamSynchronize"); }

CUresult GpuContext::health() const { return cu_.cuCtxSynchronize(); }

WorkerInfo GpuContext::info() const {
  WorkerInfo i;
  i.gpuIndex = index_;
  char name[256] = {};
  cu_.check(cu_.cuDeviceGetName(name, sizeof name - 1, device()), "cuDeviceGetName");
  i.name = name;
  i.arch = fmt::format("sm_{}{}", attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
                       attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
  char bus[64] = {};
  if (cu_.cuDeviceGetPCIBusId(bus, sizeof bus - 1, device()) == CUDA_SUCCESS) i.pciBusId = bus;
  i.smCount = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  i.l2Bytes = attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  size_t total = 0, free = 0;
  cu_.check(cu_.cuMemGetInfo(&free, &total), "cuMemGetInfo");
  i.totalMemBytes = static_cast<long long>(total);
  i.freeMemBytes = static_cast<long long>(free);
  i.driverVersion = cu_.version();
  i.maxClockMHz = attribute(CU_DEVICE_ATTRIBUTE_CLOCK_RATE) / 1000;
  return i;
}

}  // namespace gemmtune
