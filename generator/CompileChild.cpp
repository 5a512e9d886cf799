#include "CompileChild.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "ChildExec.hpp"
#include "Errors.hpp"
#include "NvrtcCompiler.hpp"

namespace gemmtune {

namespace {

constexpr int kExecFailed = 127;

nlohmann::json requestJson(const CompileUnit& unit, const std::string& arch, const CompileCache& cache,
                           const std::string& key) {
  return {{"source", unit.source},      {"expressions", unit.expressions}, {"options", unit.options},
          {"headers", unit.headers},    {"header_trees", unit.headerTrees}, {"arch", arch},
          {"cache_dir", cache.dir().string()}, {"key", key}};
}

// The request and the child's error message, in private temporary files removed with this object.
struct ExchangeFiles {
  std::string request, error;
  explicit ExchangeFiles(const nlohmann::json& req) {
    const std::string base = (std::filesystem::temp_directory_path() / "gemmtune-compile-XXXXXX").string();
    std::string tmpl = base;
    int fd = ::mkostemp(tmpl.data(), O_CLOEXEC);
    if (fd < 0) return;
    const std::vector<std::uint8_t> data = nlohmann::json::to_cbor(req);
    const bool ok = ::write(fd, data.data(), data.size()) == static_cast<ssize_t>(data.size());
    ::close(fd);
    if (!ok) {
      ::unlink(tmpl.c_str());
      return;
    }
    request = tmpl;
    error = tmpl + ".err";
  }
  ~ExchangeFiles() {
    if (!request.empty()) ::unlink(request.c_str());
    if (!error.empty()) ::unlink(error.c_str());
  }
  std::string errorText() const {
    std::ifstream in(error);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
};

const char* signalName(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGILL: return "SIGILL";
    case SIGFPE: return "SIGFPE";
    case SIGKILL: return "SIGKILL, e.g. the out-of-memory killer";
    case SIGTERM: return "SIGTERM";
    default: return "a signal";
  }
}

// The child reads and writes nothing on stdin/stdout (its request and error travel in files).
pid_t spawn(char* const argv[]) {
  const int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull < 0) return -1;
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) execChild(parent, devnull, devnull, -1, argv);
  ::close(devnull);
  return pid;
}

CompileResult failed(const CompileUnit& unit, const std::string& arch, std::string why) {
  CompileResult r;
  r.ok = false;
  r.arch = arch;
  r.sourceHash = unit.sourceHash();
  r.log = std::move(why);
  return r;
}

}  // namespace

ChildCompile compileInChild(const std::string& exe, const CompileUnit& unit, const std::string& arch,
                            const CompileCache& cache, const std::string& key, int deadlineSeconds) {
  ExchangeFiles files(requestJson(unit, arch, cache, key));
  if (files.request.empty())
    return {std::nullopt, fmt::format("cannot write a compile request under {}", std::filesystem::temp_directory_path().string())};
  std::string program = exe, cmd = "compile-unit";
  char* argv[] = {program.data(), cmd.data(), files.request.data(), files.error.data(), nullptr};
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = spawn(argv);
  if (pid < 0) return {std::nullopt, fmt::format("cannot start a compile process: {}", std::strerror(errno))};

  int status = 0;
  bool overdue = false;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) return {std::nullopt, fmt::format("lost the compile process: {}", std::strerror(errno))};
    if (!overdue && std::chrono::steady_clock::now() - start > std::chrono::seconds(deadlineSeconds)) {
      ::kill(-pid, SIGKILL);  // its whole group: nothing NVRTC started may linger
      ::kill(pid, SIGKILL);
      overdue = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (overdue) return {failed(unit, arch, fmt::format("NVRTC did not finish within {} s: killed", deadlineSeconds)), {}};
  if (WIFSIGNALED(status))
    return {failed(unit, arch, fmt::format("NVRTC died: the compile process was killed by signal {} ({})", WTERMSIG(status),
                                           signalName(WTERMSIG(status)))),
            {}};
  if (WIFEXITED(status) && WEXITSTATUS(status) == kExecFailed)
    return {std::nullopt, fmt::format("cannot run {} compile-unit", exe)};
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string why = files.errorText();
    return {std::nullopt, why.empty() ? fmt::format("the compile process exited with {}", WEXITSTATUS(status)) : why};
  }
  std::optional<CompileResult> r = cache.load(key, arch);
  if (!r) return {std::nullopt, fmt::format("a compile process's result did not reach the cache {}", cache.dir().string())};
  r->fromCache = false;
  r->compileSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {std::move(r), {}};
}

int runCompileChild(const std::string& requestPath, const std::string& errorPath) {
  auto fail = [&](const std::string& why) {
    std::ofstream(errorPath) << why;
    return kExitIoError;
  };
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
    cache.store(key, NvrtcCompiler::compile(unit, arch));
    if (!cache.load(key, arch))
      return fail(fmt::format("cannot write the compile cache {} (a writable --cache-dir, or --no-cache, avoids compiling twice)",
                              cache.dir().string()));
    return 0;
  } catch (const std::exception& e) {
    return fail(e.what());
  }
}

}  // namespace gemmtune
