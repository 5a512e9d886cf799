#include "Dispatcher.hpp"

#include <fmt/format.h>

#include <climits>
#include <cstdint>
#include <vector>

#include "CaptureMode.hpp"
#include "CublasRuntime.hpp"
#include "GpuDetect.hpp"
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
  h = mix(h, static_cast<std::uint64_t>(key.callBatch));
  h = mix(h, (std::uint64_t(static_cast<std::uint32_t>(key.batch)) << 8) | (key.layout.transA << 2) |
                 (key.layout.transB << 1) | static_cast<unsigned>(key.pointerArrays));
  return static_cast<std::size_t>(
      mix(h, key.alignA | (key.alignB << 8) | (key.alignC << 16) | (static_cast<unsigned>(key.betaZero) << 24)));
}

GemmProblem Dispatcher::ShapeKey::problem() const {
  GemmProblem p = GemmProblem::packed(GemmShape{m, n, k, layout, batch});
  p.lda = lda, p.ldb = ldb, p.ldc = ldc;
  p.pointerArrays = pointerArrays;
  // Strides change no plan beyond the alignment they imply (already in alignA..C): any valid ones do.
  if (batch > 1) p.strideA = p.rowsA() * lda, p.strideB = p.rowsB() * ldb, p.strideC = p.m * ldc;
  p.alignA = alignA, p.alignB = alignB, p.alignC = alignC;
  p.betaZero = betaZero;
  return p;
}

Dispatcher::Dispatcher(Planner& planner, DeviceSpecs& specs, Warnings& warnings, SeenRecorder* seen,
                       bool measuredWinsOnly)
    : planner_(planner), specs_(specs), warnings_(warnings), seen_(seen), measuredWinsOnly_(measuredWinsOnly) {}

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

Status Dispatcher::currentContext(unsigned long long& id, std::string& error) {
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
  if (CUresult r = d->cuCtxGetId(context, &id); r != CUDA_SUCCESS) {
    error = "cuCtxGetId on the current context: " + d->describe(r);
    return Status::no_gpu;
  }
  return Status::ok;
}

namespace {

constexpr const char* kSplitKInCapture =
    "this shape runs a kernel with a workspace (split-K, or fp16x3's split operands), which a captured graph "
    "would share with every replay and with later calls on the stream: it is not captured";
constexpr const char* kPrepareInCapture =
    "the first call of this shape on this stream is inside a CUDA graph capture, where preparing it (plan, "
    "load, allocate) is not allowed: call it once before capturing";

CUdeviceptr devicePtr(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }

// The kernel arguments of batches [first, first + count) of `call`.
SgemmArgs argsOf(const GemmCall& call, long long first, long long count) {
  SgemmArgs args{call.m, call.n, call.k, call.alpha, devicePtr(call.a), call.lda, devicePtr(call.b), call.ldb,
                 call.beta, devicePtr(call.c), call.ldc};
  args.layout = call.layout();
  args.batch.count = static_cast<int>(count);
  if (call.pointerArrays()) {
    args.batch.arrayA = devicePtr(call.arrayA + first);
    args.batch.arrayB = devicePtr(call.arrayB + first);
    args.batch.arrayC = devicePtr(call.arrayC + first);
    return args;
  }
  args.a += static_cast<CUdeviceptr>(first * call.strideA) * sizeof(float);
  args.b += static_cast<CUdeviceptr>(first * call.strideB) * sizeof(float);
  args.c += static_cast<CUdeviceptr>(first * call.strideC) * sizeof(float);
  if (count > 1) args.batch.strideA = call.strideA, args.batch.strideB = call.strideB, args.batch.strideC = call.strideC;
  return args;
}

}  // namespace

Status Dispatcher::sgemm(CUstream stream, const GemmCall& call, std::string& error) noexcept {
  try {
    unsigned long long context = 0;
    if (Status s = currentContext(context, error); s != Status::ok) return s;
    // Batches beyond one launch's grid run as several launches, in order, on the stream; the
    // first and the last (the only shapes) are prepared before any runs, so that a failure
    // leaves C untouched.
    const long long per = std::min(kBatchesPerLaunch, call.batch), last = call.batch - (call.batch - 1) / per * per;
    const Launch& full = launchFor(context, argsOf(call, 0, per), call.batch, stream);
    if (!full.declined.empty()) {
      error = full.declined;
      return Status::declined;
    }
    // Planned by the whole call (its batch count), so every chunk's plan is cuBLAS when this one is.
    if (full.cublas) {
      const Status s = runCublas(stream, context, call, full.instance, error);
      if (s == Status::ok && full.seen) full.seen->count();
      return s;
    }
    const Launch& tail = launchFor(context, argsOf(call, call.batch - last, last), call.batch, stream);
    for (const Launch* l : {&full, &tail}) {
      if (!l->declined.empty()) {
        error = l->declined;
        return Status::declined;
      }
      if (!l->error.empty()) {
        error = l->error;
        return Status::launch_failed;
      }
      // A captured split-K kernel would bake this stream's workspace into the graph, shared with
      // every replay and every later call on the stream: split-K plans are not captured.
      if (l->plan.workspaceBytes > 0 && capturing(stream)) {
        error = kSplitKInCapture;
        return Status::declined;
      }
    }
    for (long long first = 0; first < call.batch; first += per) {
      const long long count = std::min(per, call.batch - first);
      if (Status s = run(count == per ? full : tail, stream, context, argsOf(call, first, count), error);
          s != Status::ok) {
        if (first == 0) return s;  // nothing ran
        error = fmt::format("after {} of {} batches were enqueued: {}", first, call.batch, error);
        return Status::partial_failure;
      }
    }
    if (full.seen) full.seen->count();  // one per call, however many launches it took
    return Status::ok;
  } catch (const std::exception& e) {
    error = e.what();
  } catch (...) {
    error = "unknown exception in sgemm()";
  }
  return Status::launch_failed;
}

const Dispatcher::Launch& Dispatcher::launchFor(unsigned long long context, const SgemmArgs& args, long long callBatch,
                                                CUstream stream) {
  const GemmProblem problem = problemOf(args);
  const ShapeKey key{context, args.m, args.n, args.k, args.lda, args.ldb, args.ldc, args.layout, args.batch.count,
                     callBatch, problem.pointerArrays, static_cast<unsigned char>(problem.alignA),
                     static_cast<unsigned char>(problem.alignB), static_cast<unsigned char>(problem.alignC),
                     problem.betaZero};
  {
    std::shared_lock lock(launchesMutex_);
    if (auto it = launches_.find(key); it != launches_.end()) return it->second;
  }
  if (capturing(stream)) {
    static const Launch notNow = [] {
      Launch l;
      l.declined = kPrepareInCapture;
      return l;
    }();
    return notNow;
  }
  return prepared(key);
}

bool Dispatcher::capturing(CUstream stream) {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  const CUresult r = driver_->cuStreamIsCapturing(stream, &status);
  if (r == CUDA_ERROR_STREAM_CAPTURE_IMPLICIT) return true;  // the legacy stream while another captures
  return r == CUDA_SUCCESS && status != CU_STREAM_CAPTURE_STATUS_NONE;
}


Status Dispatcher::run(const Launch& launch, CUstream stream, unsigned long long context, const SgemmArgs& args,
                       std::string& error) {
  Workspace* workspace = launch.plan.workspaceBytes > 0 ? &workspaceOf(context, stream) : nullptr;
  if (CUresult r = launch.kernel->run(launch.plan, args, stream, workspace); r != CUDA_SUCCESS) {
    error = fmt::format("cuLaunchKernel({}) for {}: {}", launch.instance, problemOf(args).text(), driver_->describe(r));
    return Status::launch_failed;
  }
  return Status::ok;
}

Status Dispatcher::runCublas(CUstream stream, unsigned long long context, const GemmCall& call,
                             const std::string& instance, std::string& error) {
  std::string why;
  CublasRuntime* blas = CublasRuntime::get(why);  // loaded: prepare() plans cuBLAS only then
  if (!blas) {
    error = why;
    return Status::launch_failed;
  }
  if (call.batch > INT_MAX) {
    error = fmt::format("cuBLAS takes at most {} batches, the call has {}", INT_MAX, call.batch);
    return Status::launch_failed;
  }
  // Making a handle, or cuBLASLt's workspace, allocates: never inside a capture of this stream,
  // and only in relaxed mode while another thread may be capturing. A capture of this stream
  // runs cuBLAS's own call (CublasRuntime::sgemm), which needs no cuBLASLt handle.
  std::optional<RelaxedCaptureMode> relaxed;
  const bool captured = capturing(stream);
  const SgemmArgs args = argsOf(call, 0, call.batch);
  if (!blas->hasHandle(context, stream, !captured && CublasRuntime::ltAlgoOf(instance, args.layout))) {
    if (captured) {
      error = kPrepareInCapture;
      return Status::declined;
    }
    relaxed.emplace(*driver_);
  }
  return blas->sgemm(context, stream, args, instance, captured, error) ? Status::ok : Status::launch_failed;
}

const Dispatcher::Launch& Dispatcher::prepared(const ShapeKey& key) {
  std::lock_guard prepareLock(prepareMutex_);
  {
    std::shared_lock lock(launchesMutex_);
    if (auto it = launches_.find(key); it != launches_.end()) return it->second;  // another thread was first
  }
  // Preparing loads and allocates: allowed while another thread or stream captures a graph.
  Launch launch;
  {
    RelaxedCaptureMode relaxed(*driver_);
    launch = prepare(key);
  }
  std::unique_lock lock(launchesMutex_);
  return launches_.emplace(key, std::move(launch)).first->second;
}

Dispatcher::Launch Dispatcher::prepare(const ShapeKey& key) {
  Launch launch;
  const GemmProblem problem = key.problem();
  GpuSpec gpu;
  try {
    gpu = specs_.get(currentContextOrdinal());
  } catch (const std::exception& e) {
    launch.error = fmt::format("cannot query the current context's GPU: {}", e.what());
    return launch;
  }
  GemmShape asked = problem.shape();
  asked.batch = key.callBatch;  // tuned rows are the whole call's
  Plan plan = planner_.plan(gpu, asked);
  if (measuredWinsOnly_) launch.declined = notAMeasuredWin(plan, problem);
  if (!launch.declined.empty()) return launch;
  if (plan.cublas) {
    std::string why;
    if (CublasRuntime::get(why)) {
      launch.cublas = true;
      launch.instance = plan.choice.instance;
      if (seen_) launch.seen = seen_->counterFor(gpu, asked, plan);
      return launch;
    }
    warnings_.once("cublas-unavailable",
                   fmt::format("{}; sgemm() runs gemmtune's kernels where cuBLAS was measured fastest", why));
    plan = planner_.plan(gpu, asked, false);
  }
  // Counted by the plan that runs: without cuBLAS, its exact row may have become a nearest answer.
  if (seen_) launch.seen = seen_->counterFor(gpu, asked, plan);
  std::vector<Attempt> attempts;
  if (!plan.cubin.empty()) attempts.push_back({plan.config, true});
  attempts.push_back({plan.config, false});
  // Measured wins only: the measured configuration in its measured form, or nothing.
  const Config fallback = defaultConfig(problem.layout);
  if (!measuredWinsOnly_ && !(plan.config == fallback)) attempts.push_back({fallback, false});
  loadFirst(launch, attempts, key.context, problem, plan, gpu);
  if (measuredWinsOnly_ && !launch.error.empty()) {  // the measured kernel cannot be loaded: the caller runs it
    launch.declined = fmt::format("{} (Options::measuredWinsOnly leaves it to the caller)", launch.error);
    launch.error.clear();
  }
  return launch;
}

void Dispatcher::loadFirst(Launch& launch, const std::vector<Attempt>& attempts, unsigned long long context,
                           const GemmProblem& problem, const Plan& plan, const GpuSpec& gpu) {
  const std::string size = problem.text();
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
      if (why.empty()) m = module(context, a, launchPlan, plan, gpu, why);
    }
    if (m) {
      launch.kernel = m;
      launch.plan = std::move(launchPlan);
      launch.instance = name;
      return;
    }
    std::string next = i + 1 == attempts.size()    ? std::string("sgemm() fails with launch_failed")
                       : attempts[i + 1].config == attempts[i].config ? "compiling it with NVRTC instead"
                                                            : "falling back to " + attempts[i + 1].config.name();
    std::string what = a.stored ? "the stored binary of " + name : name;
    warnings_.once(fmt::format("{}|{}|{}", name, a.stored, why),
                   fmt::format("{} cannot be used on {} for {}: {}; {}", what, gpu.name, size, why, next));
  }
  launch.error = fmt::format("no kernel can run {} on {}: {}", size, gpu.name, why);
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
