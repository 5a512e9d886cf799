#include "Compiler.hpp"

#include <thread>

#include "NvrtcCompiler.hpp"
#include "NvrtcLibrary.hpp"
#include "ThreadPool.hpp"

namespace gemmtune {

Compiler::Compiler(CompilerOptions options)
    : templates_(std::move(options.templatesDir)), cache_(std::move(options.cacheDir)) {
  int jobs = options.jobs > 0 ? options.jobs : static_cast<int>(std::thread::hardware_concurrency());
  pool_ = std::make_unique<ThreadPool>(jobs > 0 ? jobs : 1);
}

Compiler::~Compiler() = default;

int Compiler::jobs() const { return pool_->size(); }

size_t Compiler::cancelPending() { return pool_->cancelPending(); }

CompileUnit Compiler::unit(const Config& config) const { return templates_.unit(config); }

CompileResult Compiler::compile(const Config& config, const std::string& arch) const {
  NvrtcLibrary::get().warnIfOlderThanPinned();  // a cached kernel came from the same NVRTC
  CompileUnit u = unit(config);
  std::string key = CompileCache::key(u, arch);
  if (auto hit = cache_.load(key, arch)) return *hit;
  CompileResult r = NvrtcCompiler::compile(u, arch);
  cache_.store(key, r);
  return r;
}

std::future<CompileResult> Compiler::submit(const Config& config, const std::string& arch) {
  return pool_->submit([this, config, arch] { return compile(config, arch); });
}

std::vector<CompileResult> Compiler::compileAll(const std::vector<Config>& configs, const std::string& arch) {
  std::vector<std::future<CompileResult>> futures;
  futures.reserve(configs.size());
  for (const auto& c : configs) futures.push_back(submit(c, arch));
  std::vector<CompileResult> out;
  out.reserve(configs.size());
  for (auto& f : futures) out.push_back(f.get());
  return out;
}

}  // namespace gemmtune
