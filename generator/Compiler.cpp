#include "Compiler.hpp"

#include <spdlog/spdlog.h>

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

CompileResult Compiler::compile(const Config& config, const std::string& arch) const {
  NvrtcLibrary::get().warnIfOlderThanPinned();  // a cached kernel came from the same NVRTC
  CompileUnit u = unit(config);
  std::string key = CompileCache::key(u, arch);
  if (auto hit = cache_.load(key, arch)) return *hit;
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

std::shared_future<CompileResult> Compiler::start(const Config& config, const std::string& arch) {
  const std::string key = arch + " " + config.name();
  std::lock_guard lock(inFlightMutex_);
  if (auto it = inFlight_.find(key); it != inFlight_.end()) return it->second.result;
  const std::uint64_t id = ++nextId_;
  auto forget = [this, key, id] {  // done: later submits read the disk cache instead
    std::lock_guard done(inFlightMutex_);
    if (auto it = inFlight_.find(key); it != inFlight_.end() && it->second.id == id) inFlight_.erase(it);
  };
  std::shared_future<CompileResult> result = pool_->submit([this, config, arch, forget] {
                                                   try {
                                                     CompileResult r = compile(config, arch);
                                                     forget();
                                                     return r;
                                                   } catch (...) {
                                                     forget();
                                                     throw;
                                                   }
                                                 }).share();
  inFlight_.emplace(key, InFlight{id, result});
  return result;
}

std::shared_future<CompileResult> Compiler::submit(const Config& config, const std::string& arch) {
  return start(config, arch);
}

void Compiler::prefetch(const std::vector<Config>& configs, const std::string& arch) {
  for (const auto& c : configs) start(c, arch);
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
