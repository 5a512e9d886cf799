// KernelLoader: brings one configuration's kernels into the calling thread's current context —
// from a result row's stored binary, or compiled with NVRTC (through the on-disk compile cache)
// when the row has none or its binary is refused — and checks what the driver reports about the
// loaded functions against what the launch plan will ask of them (device/LaunchLimits).
#pragma once

#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "Family.hpp"
#include "LoadedKernel.hpp"
#include "gemmtune/GpuSpec.hpp"

namespace gemmtune {
class Compiler;
}

namespace gemmtune::library {

// A kernel could not be made ready; what() says why in one line.
struct LoadFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class KernelLoader {
 public:
  explicit KernelLoader(const CudaDriver& driver);
  ~KernelLoader();

  // Throws LoadFailure.
  std::unique_ptr<LoadedKernel> fromStored(const Config& config, const LaunchPlan& plan, const std::string& cubin,
                                           const std::vector<std::string>& loweredNames, const GpuSpec& gpu) const;
  std::unique_ptr<LoadedKernel> compiled(const Config& config, const LaunchPlan& plan, const GpuSpec& gpu);

 private:
  std::unique_ptr<LoadedKernel> load(const Config& config, const LaunchPlan& plan, const std::string& cubin,
                                     const std::vector<std::string>& loweredNames, const GpuSpec& gpu) const;

  const CudaDriver& driver_;
  std::mutex mutex_;
  std::unique_ptr<Compiler> compiler_;  // made on first need: most programs never compile
};

}  // namespace gemmtune::library
