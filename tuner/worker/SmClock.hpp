// SmClock: the GPU's current SM clock through NVML (dlopen "libnvidia-ml.so.1"), recorded with
// each timing so results taken at a throttled clock can be recognised. Best effort: 0 when NVML
// or the device is not available.
#pragma once

#include <string>

namespace gemmtune {

class SmClock {
 public:
  explicit SmClock(const std::string& pciBusId);
  ~SmClock();
  SmClock(const SmClock&) = delete;
  SmClock& operator=(const SmClock&) = delete;

  int currentMHz() const;  // 0 when unknown

 private:
  struct Api;
  Api* api_ = nullptr;
  void* device_ = nullptr;
};

}  // namespace gemmtune
