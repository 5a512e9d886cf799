#include "Dispatcher.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <vector>

namespace gemmtune::library {

std::size_t Dispatcher::ShapeKeyHash::operator()(const ShapeKey& key) const noexcept {
  auto mix = [](std::uint64_t h, std::uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h;
  };
  std::uint64_t h = mix(key.context, static_cast<std::uint32_t>(key.m));
  h = mix(h, static_cast<std::uint32_t>(key.n));
  return static_cast<std::size_t>(mix(h, static_cast<std::uint32_t>(key.k)));
}

Dispatcher::Dispatcher(Planner& planner, DeviceSpecs& specs, Warnings& warnings)
    : planner_(planner), specs_(specs), warnings_(warnings) {}

// Members go in reverse order: modules before the loader and the driver copy they were made with.
Dispatcher::~Dispatcher() = default;

const CudaDriver* Dispatcher::driver() noexcept {
  std::call_once(driverOnce_, [this] {
    try {
      driver_.emplace(CudaDriver::get());
      loader_ = std::make_unique<KernelLoader>(*driver_);
    } catch (const std::exception& e) {
      driver_.reset();
      noDriver_ = e.what();
    }
  });
  return driver_ ? &*driver_ : nullptr;
}

Status Dispatcher::sgemm(CUstream stream, const SgemmCall& call, std::string& error) noexcept {
  try {
    const CudaDriver* d = driver();
    if (!d) {
      error = noDriver_;
      return Status::no_gpu;
    }
    CUcontext context = nullptr;
    if (CUresult r = d->cuCtxGetCurrent(&context); r != CUDA_SUCCESS) {
      error = "cuCtxGetCurrent: " + d->describe(r);
      return Status::no_gpu;
    }
    if (!context) {
      error = "no current CUDA context on this thread (the runtime API makes one with cudaSetDevice, the driver "
              "API with cuCtxSetCurrent)";
      return Status::no_gpu;
    }
    ShapeKey key{0, call.m, call.n, call.k};
    if (CUresult r = d->cuCtxGetId(context, &key.context); r != CUDA_SUCCESS) {
      error = "cuCtxGetId on the current context: " + d->describe(r);
      return Status::no_gpu;
    }
    const Launch* launch = nullptr;
    {
      std::shared_lock lock(launchesMutex_);
      if (auto it = launches_.find(key); it != launches_.end()) launch = &it->second;
    }
    if (!launch) launch = &prepared(key);
    if (!launch->error.empty()) {
      error = launch->error;
      return Status::launch_failed;
    }
    SgemmCall a = call;  // cuLaunchKernel takes the address of each argument
    void* params[] = {&a.m, &a.n, &a.k, &a.alpha, &a.a, &a.lda, &a.b, &a.ldb, &a.beta, &a.c, &a.ldc};
    CUresult r = d->cuLaunchKernel(launch->function, launch->grid.x, launch->grid.y, launch->grid.z, launch->block, 1,
                                   1, launch->dynamicSmemBytes, stream, params, nullptr);
    if (r != CUDA_SUCCESS) {
      error = fmt::format("cuLaunchKernel({}) for {}x{}x{}: {}", launch->instance, call.m, call.n, call.k,
                          d->describe(r));
      return Status::launch_failed;
    }
    return Status::ok;
  } catch (const std::exception& e) {
    error = e.what();
  } catch (...) {
    error = "unknown exception in sgemm()";
  }
  return Status::launch_failed;
}

const Dispatcher::Launch& Dispatcher::prepared(const ShapeKey& key) {
  std::lock_guard prepareLock(prepareMutex_);
  {
    std::shared_lock lock(launchesMutex_);
    if (auto it = launches_.find(key); it != launches_.end()) return it->second;  // another thread was first
  }
  Launch launch = prepare(key);
  std::unique_lock lock(launchesMutex_);
  return launches_.emplace(key, std::move(launch)).first->second;
}

int Dispatcher::currentOrdinal() {
  // A CUdevice is a handle; the ordinal is what queryGpu and users speak.
  CUdevice device = 0;
  driver_->check(driver_->cuCtxGetDevice(&device), "cuCtxGetDevice");
  int count = 0;
  driver_->check(driver_->cuDeviceGetCount(&count), "cuDeviceGetCount");
  for (int i = 0; i < count; ++i) {
    CUdevice candidate = 0;
    if (driver_->cuDeviceGet(&candidate, i) == CUDA_SUCCESS && candidate == device) return i;
  }
  throw CudaError(CUDA_ERROR_INVALID_DEVICE, fmt::format("the current context's device {} has no ordinal", device));
}

Dispatcher::Launch Dispatcher::prepare(const ShapeKey& key) {
  Launch launch;
  const std::string size = fmt::format("{}x{}x{}", key.m, key.n, key.k);
  GpuSpec gpu;
  try {
    gpu = specs_.get(currentOrdinal());
  } catch (const std::exception& e) {
    launch.error = fmt::format("cannot query the current context's GPU: {}", e.what());
    return launch;
  }
  Plan plan = planner_.plan(gpu, key.m, key.n, key.k);
  std::vector<Attempt> attempts;
  if (!plan.cubin.empty()) attempts.push_back({plan.config, true});
  attempts.push_back({plan.config, false});
  if (plan.config.name() != kDefaultInstance) attempts.push_back({defaultConfig(), false});

  std::string why;
  for (std::size_t i = 0; i < attempts.size(); ++i) {
    const Attempt& a = attempts[i];
    const Family& f = *a.config.family;
    const std::string name = a.config.name();
    Dim3 grid = f.grid(a.config, key.m, key.n);
    const LoadedKernel* m = nullptr;
    if (grid.x > static_cast<unsigned>(gpu.maxGridDimX) || grid.y > static_cast<unsigned>(gpu.maxGridDimY) ||
        grid.z > static_cast<unsigned>(gpu.maxGridDimZ))
      why = fmt::format("{}x{}x{} blocks exceed the GPU's grid limits {}x{}x{}", grid.x, grid.y, grid.z,
                        gpu.maxGridDimX, gpu.maxGridDimY, gpu.maxGridDimZ);
    else
      m = module(key.context, a, plan, gpu, why);
    if (m) {
      launch.function = m->function();
      launch.grid = grid;
      launch.block = static_cast<unsigned>(f.threadsPerBlock(a.config));
      launch.dynamicSmemBytes = static_cast<unsigned>(f.dynamicSmemBytes(a.config));
      launch.instance = name;
      return launch;
    }
    std::string next = i + 1 == attempts.size()    ? std::string("sgemm() fails with launch_failed")
                       : attempts[i + 1].config == a.config ? "compiling it with NVRTC instead"
                                                            : "falling back to " + attempts[i + 1].config.name();
    std::string what = a.stored ? "the stored binary of " + name : name;
    warnings_.once(fmt::format("{}|{}|{}", name, a.stored, why),
                   fmt::format("{} cannot be used on {} for {}: {}; {}", what, gpu.name, size, why, next));
  }
  launch.error = fmt::format("no kernel can run {} on {}: {}", size, gpu.name, why);
  return launch;
}

const LoadedKernel* Dispatcher::module(unsigned long long context, const Attempt& attempt, const Plan& plan,
                                 const GpuSpec& gpu, std::string& why) {
  const std::string name = attempt.config.name();
  if (auto it = modules_.find({context, name}); it != modules_.end()) return it->second.get();
  ModuleKey failKey{context, name + (attempt.stored ? "|stored" : "|nvrtc")};
  if (auto it = failed_.find(failKey); it != failed_.end()) {
    why = it->second;
    return nullptr;
  }
  try {
    auto m = attempt.stored ? loader_->fromStored(attempt.config, plan.cubin, plan.loweredName, gpu)
                            : loader_->compiled(attempt.config, gpu);
    return modules_.emplace(ModuleKey{context, name}, std::move(m)).first->second.get();
  } catch (const std::exception& e) {
    why = e.what();
    failed_.emplace(std::move(failKey), why);
    return nullptr;
  }
}

}  // namespace gemmtune::library
