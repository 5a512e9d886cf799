// DeviceSpecs: the limits of each CUDA device, asked of the driver once per ordinal.
#pragma once

#include <map>
#include <mutex>

#include "gemmtune/GpuSpec.hpp"

namespace gemmtune::library {

class DeviceSpecs {
 public:
  // Throws NoGpuError without a driver or GPU, UsageError for an ordinal out of range.
  GpuSpec get(int ordinal);

 private:
  std::mutex mutex_;
  std::map<int, GpuSpec> specs_;
};

}  // namespace gemmtune::library
