#include "CompileChild.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "NvrtcCompiler.hpp"

extern char** environ;

namespace gemmtune {

namespace {

nlohmann::json requestJson(const CompileUnit& unit, const std::string& arch, const CompileCache& cache,
                           const std::string& key) {
  return {{"source", unit.source},      {"expressions", unit.expressions}, {"options", unit.options},
          {"headers", unit.headers},    {"header_trees", unit.headerTrees}, {"arch", arch},
          {"cache_dir", cache.dir().string()}, {"key", key}};
}

// A private temporary file holding the request; removed with this object.
struct RequestFile {
  std::string path;
  explicit RequestFile(const nlohmann::json& request) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "gemmtune-compile-XXXXXX").string();
    int fd = ::mkstemp(tmpl.data());
    if (fd < 0) return;
    const std::vector<std::uint8_t> data = nlohmann::json::to_cbor(request);
    bool ok = ::write(fd, data.data(), data.size()) == static_cast<ssize_t>(data.size());
    ::close(fd);
    if (ok) path = tmpl;
    else ::unlink(tmpl.c_str());
  }
  ~RequestFile() {
    if (!path.empty()) ::unlink(path.c_str());
  }
};

bool isCrash(int sig) { return sig == SIGSEGV || sig == SIGABRT || sig == SIGBUS || sig == SIGILL || sig == SIGFPE; }

}  // namespace

std::optional<CompileResult> compileInChild(const std::string& exe, const CompileUnit& unit, const std::string& arch,
                                            const CompileCache& cache, const std::string& key) {
  RequestFile request(requestJson(unit, arch, cache, key));
  if (request.path.empty()) return std::nullopt;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // Silent: the parent reports (a child's NVRTC warnings would repeat once per compile).
  for (int fd : {0, 1, 2}) posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Its own process group: Ctrl-C stops the tuner, which stops queueing; a running compile
  // finishes into the cache instead of turning into a spurious failure.
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  std::string arg0 = "gemmtune", cmd = "compile-unit";
  char* argv[] = {arg0.data(), cmd.data(), request.path.data(), nullptr};
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  const int err = posix_spawn(&pid, exe.c_str(), &actions, &attr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (err != 0) {
    spdlog::debug("cannot start the compile process {}: {}", exe, std::strerror(err));
    return std::nullopt;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status) && isCrash(WTERMSIG(status))) {
    CompileResult r;
    r.ok = false;
    r.arch = arch;
    r.sourceHash = unit.sourceHash();
    r.log = fmt::format("NVRTC crashed: the compile process was killed by signal {} ({})", WTERMSIG(status),
                        strsignal(WTERMSIG(status)));
    return r;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    spdlog::debug("compile process for {} ended with status {}: compiling in-process", unit.expressions.front(), status);
    return std::nullopt;
  }
  std::optional<CompileResult> r = cache.load(key, arch);
  if (r) {
    r->fromCache = false;
    r->compileSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return r;
}

int runCompileChild(const std::string& requestPath) {
  try {
    std::ifstream in(requestPath, std::ios::binary);
    const std::vector<std::uint8_t> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const nlohmann::json j = nlohmann::json::from_cbor(data);
    CompileUnit unit;
    unit.source = j.at("source");
    unit.expressions = j.at("expressions");
    unit.options = j.at("options");
    unit.headers = j.at("headers").get<std::vector<std::pair<std::string, std::string>>>();
    unit.headerTrees = j.at("header_trees");
    const std::string arch = j.at("arch"), key = j.at("key");
    const CompileCache cache(j.at("cache_dir").get<std::string>());
    const CompileResult r = NvrtcCompiler::compile(unit, arch);
    cache.store(key, r);
    if (!cache.load(key, arch)) {
      std::cerr << "gemmtune compile-unit: cannot store the result in " << cache.dir().string() << "\n";
      return 70;
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "gemmtune compile-unit: " << e.what() << "\n";
    return 70;
  }
}

}  // namespace gemmtune
