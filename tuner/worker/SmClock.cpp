#include "SmClock.hpp"

#include <dlfcn.h>

namespace gemmtune {

// The few NVML entry points used, declared here because nvml.h is not part of every toolkit
// install. nvmlReturn_t is an int-sized enum with 0 = success; NVML_CLOCK_SM is 1.
struct SmClock::Api {
  using Init = int (*)();
  using HandleByBusId = int (*)(const char*, void**);
  using ClockInfo = int (*)(void*, int, unsigned*);
  using Shutdown = int (*)();
  HandleByBusId handleByBusId = nullptr;
  ClockInfo clockInfo = nullptr;
  Shutdown shutdown = nullptr;
};

SmClock::SmClock(const std::string& pciBusId) {
  if (pciBusId.empty()) return;
  void* lib = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return;
  auto init = reinterpret_cast<Api::Init>(::dlsym(lib, "nvmlInit_v2"));
  auto api = new Api;
  api->handleByBusId = reinterpret_cast<Api::HandleByBusId>(::dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
  api->clockInfo = reinterpret_cast<Api::ClockInfo>(::dlsym(lib, "nvmlDeviceGetClockInfo"));
  api->shutdown = reinterpret_cast<Api::Shutdown>(::dlsym(lib, "nvmlShutdown"));
  if (!init || !api->handleByBusId || !api->clockInfo || !api->shutdown || init() != 0) {
    delete api;
    return;
  }
  if (api->handleByBusId(pciBusId.c_str(), &device_) != 0) {
    api->shutdown();
    delete api;
    device_ = nullptr;
    return;
  }
  api_ = api;
}

SmClock::~SmClock() {
  if (api_) api_->shutdown();
  delete api_;
}

int SmClock::currentMHz() const {
  constexpr int kClockSm = 1;
  unsigned mhz = 0;
  if (!api_ || api_->clockInfo(device_, kClockSm, &mhz) != 0) return 0;
  return static_cast<int>(mhz);
}

}  // namespace gemmtune
