#include "CompileChild.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ChildProcess.hpp"
#include "ExitCodes.hpp"
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

CompileResult failed(const CompileUnit& unit, const std::string& arch, std::string why) {
  CompileResult r;
  r.ok = false;
  r.arch = arch;
  r.sourceHash = unit.sourceHash();
  r.log = std::move(why);
  return r;
}

// How a compile child that ran ended: its result from the cache, a failed compile when NVRTC
// crashed, or unusable when children cannot work here.
ChildCompile finished(const ChildProcess& child, const ExchangeFiles& files, const std::string& exe, const CompileUnit& unit,
                      const std::string& arch, const CompileCache& cache, const std::string& key) {
  if (child.termSignal() != 0)
    return {failed(unit, arch, fmt::format("NVRTC died: the compile process was {}{}", child.exitText(),
                                           child.termSignal() == SIGKILL ? ", e.g. by the out-of-memory killer" : "")),
            {}};
  if (!child.exitCode()) return {std::nullopt, fmt::format("the compile process was {}", child.exitText())};
  // The program started, but a wrapper script's own exec failed (the shell's 127): no child
  // compiles here, whatever the configuration.
  if (*child.exitCode() == kExecFailed)
    return {std::nullopt, fmt::format("cannot run {} compile-unit: it {}", exe, child.exitText())};
  if (*child.exitCode() != 0) {
    std::string why = files.errorText();
    return {std::nullopt, why.empty() ? fmt::format("the compile process {}", child.exitText()) : why};
  }
  std::optional<CompileResult> r = cache.load(key, arch);
  if (!r) return {std::nullopt, fmt::format("a compile process's result did not reach the cache {}", cache.dir().string())};
  r->fromCache = false;
  return {std::move(r), {}};
}

}  // namespace

ChildCompile compileInChild(const std::string& exe, const CompileUnit& unit, const std::string& arch,
                            const CompileCache& cache, const std::string& key, int deadlineSeconds) {
  ExchangeFiles files(requestJson(unit, arch, cache, key));
  if (files.request.empty())
    return {std::nullopt, fmt::format("cannot write a compile request under {}", std::filesystem::temp_directory_path().string())};
  const auto start = ChildProcess::Clock::now();
  std::optional<ChildProcess> child;
  try {
    // The child reads and writes nothing on stdin/stdout: its request and error travel in files.
    child.emplace("the compile process", std::vector<std::string>{exe, "compile-unit", files.request, files.error},
                  ChildProcess::Stdio::DevNull);
  } catch (const UnavailableError& e) {
    return {std::nullopt, e.what()};
  }
  if (!child->waitUntil(start + std::chrono::seconds(deadlineSeconds))) {
    child->kill();  // its whole group: nothing NVRTC started may linger
    return {failed(unit, arch, fmt::format("NVRTC did not finish within {} s: killed", deadlineSeconds)), {}};
  }
  ChildCompile done = finished(*child, files, exe, unit, arch, cache, key);
  if (done.result && child->exitCode() == 0)  // the child's result, not a crash recorded here
    done.result->compileSeconds = std::chrono::duration<double>(ChildProcess::Clock::now() - start).count();
  return done;
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
