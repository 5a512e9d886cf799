#include "KernelLoader.hpp"

#include <fmt/format.h>

#include "Compiler.hpp"
#include "CubinCheck.hpp"
#include "LaunchLimits.hpp"

namespace gemmtune::library {

namespace {

std::string firstLine(const std::string& text) {
  auto end = text.find('\n');
  return end == std::string::npos ? text : text.substr(0, end);
}

}  // namespace

KernelLoader::KernelLoader(const CudaDriver& driver) : driver_(driver) {}
KernelLoader::~KernelLoader() = default;

std::unique_ptr<LoadedKernel> KernelLoader::fromStored(const Config& config, const LaunchPlan& plan,
                                                       const std::string& cubin,
                                                       const std::vector<std::string>& loweredNames,
                                                       const GpuSpec& gpu) const {
  return load(config, plan, cubin, loweredNames, gpu);
}

std::unique_ptr<LoadedKernel> KernelLoader::compiled(const Config& config, const LaunchPlan& plan, const GpuSpec& gpu) {
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
  return load(config, plan, result.cubin, result.loweredNames, gpu);
}

std::unique_ptr<LoadedKernel> KernelLoader::load(const Config& config, const LaunchPlan& plan, const std::string& cubin,
                                                 const std::vector<std::string>& loweredNames, const GpuSpec& gpu) const {
  if (auto problem = storedBinaryProblem(config, cubin, loweredNames, gpu)) throw LoadFailure(*problem);
  std::unique_ptr<LoadedKernel> m;
  try {
    m = std::make_unique<LoadedKernel>(cubin, loweredNames, driver_);
    // The driver's own figures, from the binary as loaded, against what each launch asks.
    for (const KernelLaunch& l : plan.launches) {
      if (l.kernel < 0 || static_cast<size_t>(l.kernel) >= m->kernels())
        throw LoadFailure(fmt::format("the plan of {} launches kernel {} of {}", config.name(), l.kernel, m->kernels()));
      const auto k = static_cast<size_t>(l.kernel);
      const int threads = static_cast<int>(l.block.volume());
      if (int most = m->attribute(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, k); most < threads)
        throw LoadFailure(fmt::format("the loaded kernel allows {} threads per block, {} needs {}", most, config.name(), threads));
      const KernelFootprint footprint{threads, m->attribute(CU_FUNC_ATTRIBUTE_NUM_REGS, k),
                                      m->attribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, k), l.dynamicSmemBytes};
      if (auto v = kernelLimitViolation(gpu, footprint))
        throw LoadFailure(fmt::format("the loaded kernel of {} does not fit the GPU: {} ({})", config.name(), v->reason, v->limit));
    }
  } catch (const CudaError& e) {
    throw LoadFailure(e.what());
  }
  return m;
}

}  // namespace gemmtune::library
