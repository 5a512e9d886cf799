// compile_throughput: NVRTC compile throughput of gemmtune's default space, cold (empty cache)
// and cached (second pass over the same cache), for both families.
//
// Run: build/bench/compile_throughput [--arch sm_90] [--jobs N] [--limit N]
// Prints one table; the cached pass must exceed 1000 instances/s, cold scales with --jobs.
#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>

#include "Compiler.hpp"
#include "FamilyRegistry.hpp"

using namespace gemmtune;
namespace fs = std::filesystem;

int main(int argc, char** argv) {
  std::string arch = "sm_90";
  int jobs = static_cast<int>(std::thread::hardware_concurrency());
  size_t limit = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--arch")) arch = argv[i + 1];
    else if (!std::strcmp(argv[i], "--jobs")) jobs = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--limit")) limit = std::strtoul(argv[i + 1], nullptr, 10);
  }
  std::vector<Config> configs;
  for (const auto& f : FamilyRegistry::builtin().all())
    for (bool guarded : {false, true})
      for (auto& c : FamilyRegistry::enumerate(f, guarded))
        if (!c.violated()) configs.push_back(c);
  if (limit && configs.size() > limit) configs.resize(limit);

  char tmpl[] = "/tmp/gemmtune-bench-cache-XXXXXX";
  fs::path cache = ::mkdtemp(tmpl);
  Compiler compiler({{}, cache, jobs});
  auto timed = [&](const char* label) {
    auto t0 = std::chrono::steady_clock::now();
    auto results = compiler.compileAll(configs, arch);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    size_t ok = 0, hits = 0;
    for (const auto& r : results) {
      ok += r.ok;
      hits += r.fromCache;
    }
    fmt::print("{:<8} {:>9} {:>6} {:>6} {:>9.2f} {:>12.1f}\n", label, results.size(), ok, hits, s, results.size() / s);
  };
  fmt::print("compile throughput, {} instances (both families, both forms), {}, {} jobs\n", configs.size(), arch, jobs);
  fmt::print("{:<8} {:>9} {:>6} {:>6} {:>9} {:>12}\n", "pass", "instances", "ok", "cached", "seconds", "instances/s");
  timed("cold");
  timed("cached");
  fs::remove_all(cache);
}
