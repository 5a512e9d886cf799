#include "LaunchGate.hpp"

#include <cstdlib>
#include <string>

#include "CudaDriver.hpp"
#include "HelperKernels.hpp"

namespace gemmtune {

LaunchGate::LaunchGate(const HelperKernels& helpers) : helpers_(helpers) {
  const char* blocking = std::getenv("CUDA_LAUNCH_BLOCKING");
  blockingLaunches_ = blocking && std::string(blocking) == "1";
  const auto& cu = CudaDriver::get();
  void* host = nullptr;
  cu.check(cu.cuMemHostAlloc(&host, sizeof(std::uint32_t), CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE),
           "allocating the timer's gate word");
  word_ = static_cast<std::uint32_t*>(host);
  *word_ = 0;
  if (CUresult r = cu.cuMemHostGetDevicePointer(&device_, host, 0); r != CUDA_SUCCESS) {
    cu.cuMemFreeHost(host);
    cu.check(r, "mapping the timer's gate word");
  }
}

LaunchGate::~LaunchGate() {
  if (word_) CudaDriver::get().cuMemFreeHost(word_);
}

void LaunchGate::close() {
  if (!blockingLaunches_) helpers_.hold(device_, ++ticket_, kTimeoutNs);
}

void LaunchGate::open() { __atomic_store_n(word_, ticket_, __ATOMIC_RELEASE); }

LaunchGate::Closed::Closed(LaunchGate* gate) : gate_(gate) {
  if (gate_) gate_->close();
}

LaunchGate::Closed::~Closed() {
  if (gate_) gate_->open();
}

}  // namespace gemmtune
