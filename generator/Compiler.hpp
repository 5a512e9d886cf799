// Compiler: instance -> CompileResult, through the compile cache and a pool of NVRTC threads.
#pragma once

#include <filesystem>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "CompileCache.hpp"
#include "CompileResult.hpp"
#include "Family.hpp"
#include "TemplateSource.hpp"

namespace gemmtune {

class ThreadPool;

struct CompilerOptions {
  std::filesystem::path templatesDir;                      // empty: embedded templates
  std::filesystem::path cacheDir = CompileCache::defaultDir();  // empty: no disk cache
  int jobs = 0;                                             // 0: hardware threads
};

class Compiler {
 public:
  explicit Compiler(CompilerOptions options = {});
  ~Compiler();

  // Exactly what NVRTC sees for this config (its source hash is part of every result's key).
  CompileUnit unit(const Config& config) const;
  std::string sourceHash(const Family& family) const { return templates_.sourceHash(family); }
  // Synchronous, on the calling thread; served from the cache when possible.
  CompileResult compile(const Config& config, const std::string& arch) const;
  // Queued on the pool.
  std::future<CompileResult> submit(const Config& config, const std::string& arch);
  // All configs in parallel; results in input order.
  std::vector<CompileResult> compileAll(const std::vector<Config>& configs, const std::string& arch);

  // Drops queued compiles that have not started (an interrupted run need not wait for them).
  size_t cancelPending();
  int jobs() const;
  const CompileCache& cache() const { return cache_; }

 private:
  TemplateSource templates_;
  CompileCache cache_;
  std::unique_ptr<ThreadPool> pool_;
};

}  // namespace gemmtune
