#include "KernelLoader.hpp"

#include <fmt/format.h>

#include "Compiler.hpp"
#include "CubinCheck.hpp"

namespace gemmtune::library {

namespace {

std::string firstLine(const std::string& text) {
  auto end = text.find('\n');
  return end == std::string::npos ? text : text.substr(0, end);
}

}  // namespace

KernelLoader::KernelLoader(const CudaDriver& driver) : driver_(driver) {}
KernelLoader::~KernelLoader() = default;

std::unique_ptr<LoadedKernel> KernelLoader::fromStored(const Config& config, const std::string& cubin,
                                                 const std::string& loweredName, const GpuSpec& gpu) const {
  return load(config, cubin, loweredName, gpu);
}

std::unique_ptr<LoadedKernel> KernelLoader::compiled(const Config& config, const GpuSpec& gpu) {
  CompileResult result;
  {
    std::lock_guard lock(mutex_);
    try {
      if (!compiler_) {
        CompilerOptions options;
        options.jobs = 1;  // one compile at a time: only first calls of new shapes get here
        compiler_ = std::make_unique<Compiler>(std::move(options));
      }
      result = compiler_->compile(config, gpu.arch());
    } catch (const std::exception& e) {
      throw LoadFailure(fmt::format("NVRTC could not compile {} for {}: {}", config.name(), gpu.arch(), e.what()));
    }
  }
  if (!result.ok)
    throw LoadFailure(fmt::format("NVRTC could not compile {} for {}: {}", config.name(), gpu.arch(),
                                  firstLine(result.log)));
  return load(config, result.cubin, result.loweredName, gpu);
}

std::unique_ptr<LoadedKernel> KernelLoader::load(const Config& config, const std::string& cubin,
                                           const std::string& loweredName, const GpuSpec& gpu) const {
  if (auto problem = storedBinaryProblem(config, cubin, loweredName, gpu)) throw LoadFailure(*problem);
  const Family& f = *config.family;
  const int threads = f.threadsPerBlock(config), dynamicSmem = f.dynamicSmemBytes(config);
  std::unique_ptr<LoadedKernel> m;
  try {
    m = std::make_unique<LoadedKernel>(cubin, loweredName, dynamicSmem, driver_);
    // The driver's own figures, from the binary as loaded: registers and launch bounds decide the
    // largest block, the binary's declarations the static shared memory.
    if (int most = m->attribute(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK); most < threads)
      throw LoadFailure(fmt::format("the loaded kernel allows {} threads per block, {} needs {}", most, config.name(),
                                    threads));
    int staticSmem = m->attribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
    if (staticSmem + dynamicSmem > gpu.smemPerBlockOptin)
      throw LoadFailure(fmt::format("the loaded kernel needs {} B of shared memory, the GPU allows {} B",
                                    staticSmem + dynamicSmem, gpu.smemPerBlockOptin));
  } catch (const CudaError& e) {
    throw LoadFailure(e.what());
  }
  return m;
}

}  // namespace gemmtune::library
