#include "Compiler.hpp"

#include <thread>

#include "NvrtcCompiler.hpp"
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

std::string Compiler::source(const Config& config) const { return templates_.get(*config.family); }

CompileResult Compiler::compile(const Config& config, const std::string& arch) const {
  std::string src = source(config);
  std::string expr = config.nameExpression();
  std::string key = CompileCache::key(src, expr, arch);
  if (auto hit = cache_.load(key, arch)) return *hit;
  CompileResult r = NvrtcCompiler::compile(src, expr, arch);
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
