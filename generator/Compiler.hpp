// Compiler: instance -> CompileResult, through the compile cache and a pool of NVRTC threads.
#pragma once

#include <filesystem>
#include <atomic>
#include <cstdint>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <unordered_map>
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
  // A gemmtune program to compile in (`<program> compile-unit`, one child per compile; needs the
  // disk cache, which carries the result back). Empty: NVRTC on the pool's threads. Children
  // scale with cores where NVRTC's threads do not (CompileChild.hpp).
  std::string childProgram;
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
  // Queued on the pool. A configuration already queued or compiling (a prefetch, another
  // submit) is not compiled again: the future waits for that compile. One in the disk cache is
  // read at once (a ready future), never queued behind pending compiles.
  std::shared_future<CompileResult> submit(const Config& config, const std::string& arch);
  // Queues compiles whose results are wanted later (they land in the disk cache, and a later
  // submit of one still in flight joins it): slow families compile while others are timed.
  void prefetch(const std::vector<Config>& configs, const std::string& arch);
  // All configs in parallel; results in input order.
  std::vector<CompileResult> compileAll(const std::vector<Config>& configs, const std::string& arch);

  // Drops queued compiles that have not started (an interrupted run need not wait for them).
  size_t cancelPending();
  int jobs() const;
  const CompileCache& cache() const { return cache_; }
  // NVRTC compiles run so far (cache misses).
  int nvrtcCompiles() const { return nvrtcCompiles_; }

 private:
  // The disk cache's result for `config`, filling in its unit and cache key either way.
  std::optional<CompileResult> fromCache(const Config& config, const std::string& arch, CompileUnit& unit,
                                         std::string& key) const;
  struct Job;
  // The one compile of `config` queued or running, started if there is none. `needed` (a submit:
  // the caller waits for it): a disk-cache hit is returned ready, and a compile still queued
  // moves to the front of the queue; a prefetch only queues.
  std::shared_future<CompileResult> start(const Config& config, const std::string& arch, bool needed);
  std::shared_future<CompileResult> promote(const std::shared_ptr<Job>& job, const Config& config,
                                            const std::string& arch);
  std::function<void()> runner(std::shared_ptr<Job> job, Config config, std::string arch);

  struct InFlight {
    std::uint64_t id = 0;
    std::shared_ptr<Job> job;
  };

  TemplateSource templates_;
  CompileCache cache_;
  std::string childProgram_;
  mutable std::atomic<bool> childrenWork_{true};  // false after a child could not bring a result back
  std::mutex inFlightMutex_;
  std::unordered_map<std::string, InFlight> inFlight_;  // by arch and instance name
  std::uint64_t nextId_ = 0;
  mutable std::atomic<int> nvrtcCompiles_{0};
  std::unique_ptr<ThreadPool> pool_;  // last: its workers stop before the members they use go
};

}  // namespace gemmtune
