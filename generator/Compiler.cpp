#include "Compiler.hpp"

#include <spdlog/spdlog.h>

#include <functional>
#include <thread>

#include "CompileChild.hpp"
#include "NvrtcCompiler.hpp"
#include "NvrtcLibrary.hpp"
#include "ThreadPool.hpp"

namespace gemmtune {

Compiler::Compiler(CompilerOptions options)
    : templates_(std::move(options.templatesDir)), cache_(std::move(options.cacheDir)),
      childProgram_(std::move(options.childProgram)) {
  int jobs = options.jobs > 0 ? options.jobs : static_cast<int>(std::thread::hardware_concurrency());
  pool_ = std::make_unique<ThreadPool>(jobs > 0 ? jobs : 1);
}

Compiler::~Compiler() = default;

int Compiler::jobs() const { return pool_->size(); }

size_t Compiler::cancelPending() {
  // Dropped compiles leave broken futures: no later submit may join them. (Lock order, here and
  // in start(): the in-flight map, then the pool's queue.)
  std::lock_guard lock(inFlightMutex_);
  inFlight_.clear();
  return pool_->cancelPending();
}

CompileUnit Compiler::unit(const Config& config) const { return templates_.unit(config); }

std::optional<CompileResult> Compiler::fromCache(const Config& config, const std::string& gpuArch, CompileUnit& u,
                                                 std::string& key) const {
  NvrtcLibrary::get().warnIfOlderThanPinned();  // a cached kernel came from the same NVRTC
  const std::string arch = config.compileArch(gpuArch);
  u = unit(config);
  key = CompileCache::key(u, arch);
  return cache_.load(key, arch);
}

CompileResult Compiler::compile(const Config& config, const std::string& gpuArch) const {
  const std::string arch = config.compileArch(gpuArch);
  CompileUnit u;
  std::string key;
  if (auto hit = fromCache(config, gpuArch, u, key)) return *hit;
  ++nvrtcCompiles_;
  if (!childProgram_.empty() && !cache_.dir().empty() && childrenWork_) {
    ChildCompile child = compileInChild(childProgram_, u, arch, cache_, key);
    if (child.result) return *child.result;  // stored by the child
    if (childrenWork_.exchange(false))
      spdlog::warn("compiling on threads from now on (slower with many cores): {}", child.unusable);
  }
  CompileResult r = NvrtcCompiler::compile(u, arch);
  cache_.store(key, r);
  return r;
}

// One compile, run by whichever of its queue entries a pool worker reaches first (a submit that
// needs a queued compile now adds a second entry at the front of the queue); the other is a no-op.
struct Compiler::Job {
  std::atomic<bool> started{false};
  std::function<void()> forget;  // drops the in-flight entry once done
  std::promise<CompileResult> promise;
  std::shared_future<CompileResult> result = promise.get_future().share();
};

std::shared_future<CompileResult> Compiler::start(const Config& config, const std::string& arch, bool needed) {
  // One program per compile: configurations differing only in launch-only parameters share it.
  std::string key = config.compileArch(arch);
  for (const auto& e : config.kernelExpressions()) key += " " + e;
  if (needed && !cache_.dir().empty()) {
    {
      std::lock_guard lock(inFlightMutex_);
      if (auto it = inFlight_.find(key); it != inFlight_.end()) return promote(it->second.job, config, arch);
    }
    // Compiled already (a prefetch that finished, an earlier run): ready now. Queued, it would
    // wait behind every compile still pending, minutes of CUTLASS on a cold cache, while the
    // GPU idles (the first family of a cold tune waited 37 s for four cached kernels).
    CompileUnit u;
    std::string cacheKey;
    if (auto hit = fromCache(config, arch, u, cacheKey)) {
      std::promise<CompileResult> ready;
      ready.set_value(std::move(*hit));
      return ready.get_future().share();
    }
  }
  std::lock_guard lock(inFlightMutex_);
  if (auto it = inFlight_.find(key); it != inFlight_.end())
    return needed ? promote(it->second.job, config, arch) : it->second.job->result;
  const std::uint64_t id = ++nextId_;
  auto job = std::make_shared<Job>();
  job->forget = [this, key, id] {  // done: later submits read the disk cache instead
    std::lock_guard done(inFlightMutex_);
    if (auto it = inFlight_.find(key); it != inFlight_.end() && it->second.id == id) inFlight_.erase(it);
  };
  pool_->submit(runner(job, config, arch), needed);
  inFlight_.emplace(key, InFlight{id, job});
  return job->result;
}

std::shared_future<CompileResult> Compiler::promote(const std::shared_ptr<Job>& job, const Config& config,
                                                    const std::string& arch) {
  // Still queued (prefetches go in family order, a strategy needs its own order): a second entry
  // at the front runs it next; whichever entry comes first compiles, the other does nothing.
  if (!job->started) pool_->submit(runner(job, config, arch), true);
  return job->result;
}

std::function<void()> Compiler::runner(std::shared_ptr<Job> job, Config config, std::string arch) {
  return [this, job = std::move(job), config = std::move(config), arch = std::move(arch)] {
    if (job->started.exchange(true)) return;  // the other entry ran it
    try {
      CompileResult r = compile(config, arch);
      job->forget();
      job->promise.set_value(std::move(r));
    } catch (...) {
      job->forget();
      job->promise.set_exception(std::current_exception());
    }
  };
}

std::shared_future<CompileResult> Compiler::submit(const Config& config, const std::string& arch) {
  return start(config, arch, true);
}

void Compiler::prefetch(const std::vector<Config>& configs, const std::string& arch) {
  // Queued whatever the cache holds: a hit costs a pool worker a file read, not this thread.
  for (const auto& c : configs) start(c, arch, false);
}

std::vector<CompileResult> Compiler::compileAll(const std::vector<Config>& configs, const std::string& arch) {
  std::vector<std::shared_future<CompileResult>> futures;
  futures.reserve(configs.size());
  for (const auto& c : configs) futures.push_back(submit(c, arch));
  std::vector<CompileResult> out;
  out.reserve(configs.size());
  for (auto& f : futures) out.push_back(f.get());
  return out;
}

}  // namespace gemmtune
