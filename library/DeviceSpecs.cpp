#include "DeviceSpecs.hpp"

#include "GpuDetect.hpp"

namespace gemmtune::library {

GpuSpec DeviceSpecs::get(int ordinal) {
  std::lock_guard lock(mutex_);
  if (auto it = specs_.find(ordinal); it != specs_.end()) return it->second;
  return specs_.emplace(ordinal, queryGpu(ordinal)).first->second;
}

}  // namespace gemmtune::library
