#include "Dispatcher.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <vector>

#include "LaunchLimits.hpp"

namespace gemmtune::library {

std::size_t Dispatcher::ShapeKeyHash::operator()(const ShapeKey& key) const noexcept {
  auto mix = [](std::uint64_t h, std::uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h;
  };
  std::uint64_t h = mix(key.context, static_cast<std::uint32_t>(key.m));
  h = mix(h, static_cast<std::uint32_t>(key.n));
  h = mix(h, static_cast<std::uint32_t>(key.k));
  h = mix(h, (std::uint64_t(static_cast<std::uint32_t>(key.lda)) << 32) | static_cast<std::uint32_t>(key.ldb));
  h = mix(h, static_cast<std::uint32_t>(key.ldc));
  return static_cast<std::size_t>(
      mix(h, key.alignA | (key.alignB << 8) | (key.alignC << 16) | (static_cast<unsigned>(key.betaZero) << 24)));
}

GemmProblem Dispatcher::ShapeKey::problem() const {
  GemmProblem p;
  p.m = m, p.n = n, p.k = k, p.lda = lda, p.ldb = ldb, p.ldc = ldc;
  p.alignA = alignA, p.alignB = alignB, p.alignC = alignC;
  p.betaZero = betaZero;
  return p;
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
    SgemmArgs args{call.m, call.n, call.k, call.alpha, reinterpret_cast<CUdeviceptr>(call.a), call.lda,
                   reinterpret_cast<CUdeviceptr>(call.b), call.ldb, call.beta, reinterpret_cast<CUdeviceptr>(call.c),
                   call.ldc};
    const GemmProblem problem = problemOf(args);
    ShapeKey key{0, call.m, call.n, call.k, call.lda, call.ldb, call.ldc,
                 static_cast<unsigned char>(problem.alignA), static_cast<unsigned char>(problem.alignB),
                 static_cast<unsigned char>(problem.alignC), problem.betaZero};
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
    Workspace* workspace = launch->plan.workspaceBytes > 0 ? &workspaceOf(key.context, stream) : nullptr;
    if (CUresult r = launch->kernel->run(launch->plan, args, stream, workspace); r != CUDA_SUCCESS) {
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
  if (!(plan.config == defaultConfig())) attempts.push_back({defaultConfig(), false});

  const GemmProblem problem = key.problem();
  std::string why;
  for (std::size_t i = 0; i < attempts.size(); ++i) {
    Attempt a = attempts[i];
    // The unguarded form may not run these operands (tiles, vector widths, alignment): its guarded
    // form does, but is another binary than the stored one.
    LaunchPlan launchPlan = planLaunch(a.config, problem);
    if (!launchPlan.runnable() && !a.config.guarded) {
      a.config.guarded = true;
      launchPlan = planLaunch(a.config, problem);
    }
    const std::string name = a.config.name();
    const LoadedKernel* m = nullptr;
    if (!launchPlan.runnable()) {
      why = launchPlan.refusal;
    } else if (a.stored && !(a.config == attempts[i].config)) {
      why = "its stored binary is the unguarded form, these operands need the guarded one";
    } else {
      why.clear();
      for (const KernelLaunch& l : launchPlan.launches)
        if (auto v = gridLimitViolation(gpu, l.grid)) why = fmt::format("its grid does not fit the GPU: {}", v->reason);
      if (why.empty()) m = module(key.context, a, launchPlan, plan, gpu, why);
    }
    if (m) {
      launch.kernel = m;
      launch.plan = std::move(launchPlan);
      launch.instance = name;
      return launch;
    }
    std::string next = i + 1 == attempts.size()    ? std::string("sgemm() fails with launch_failed")
                       : attempts[i + 1].config == attempts[i].config ? "compiling it with NVRTC instead"
                                                            : "falling back to " + attempts[i + 1].config.name();
    std::string what = a.stored ? "the stored binary of " + name : name;
    warnings_.once(fmt::format("{}|{}|{}", name, a.stored, why),
                   fmt::format("{} cannot be used on {} for {}: {}; {}", what, gpu.name, size, why, next));
  }
  launch.error = fmt::format("no kernel can run {} on {}: {}", size, gpu.name, why);
  return launch;
}

Workspace& Dispatcher::workspaceOf(unsigned long long context, CUstream stream) {
  std::lock_guard lock(workspacesMutex_);
  auto& w = workspaces_[{context, stream}];
  if (!w) w = std::make_unique<Workspace>(*driver_);
  return *w;
}

const LoadedKernel* Dispatcher::module(unsigned long long context, const Attempt& attempt, const LaunchPlan& launchPlan,
                                       const Plan& plan, const GpuSpec& gpu, std::string& why) {
  const std::string name = attempt.config.name();
  if (auto it = modules_.find({context, name}); it != modules_.end()) return it->second.get();
  ModuleKey failKey{context, name + (attempt.stored ? "|stored" : "|nvrtc")};
  if (auto it = failed_.find(failKey); it != failed_.end()) {
    why = it->second;
    return nullptr;
  }
  try {
    auto m = attempt.stored ? loader_->fromStored(attempt.config, launchPlan, plan.cubin, plan.loweredNames, gpu)
                            : loader_->compiled(attempt.config, launchPlan, gpu);
    return modules_.emplace(ModuleKey{context, name}, std::move(m)).first->second.get();
  } catch (const std::exception& e) {
    why = e.what();
    failed_.emplace(std::move(failKey), why);
    return nullptr;
  }
}

}  // namespace gemmtune::library
