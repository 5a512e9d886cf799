// KernelLoader: brings one configuration's kernel into the calling thread's current context —
// from a result row's stored binary, or compiled with NVRTC (through the on-disk compile cache)
// when the row has none or its binary is refused — and checks what the driver reports about the
// loaded function against what the launch will ask of it.
#pragma once

#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "Family.hpp"
#include "KernelLauncher.hpp"
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
  std::unique_ptr<LoadedKernel> fromStored(const Config& config, const std::string& cubin, const std::string& loweredName,
                                     const GpuSpec& gpu) const;
  std::unique_ptr<LoadedKernel> compiled(const Config& config, const GpuSpec& gpu);

 private:
  std::unique_ptr<LoadedKernel> load(const Config& config, const std::string& cubin, const std::string& loweredName,
                               const GpuSpec& gpu) const;

  const CudaDriver& driver_;
  std::mutex mutex_;
  std::unique_ptr<Compiler> compiler_;  // made on first need: most programs never compile
};

}  // namespace gemmtune::library
