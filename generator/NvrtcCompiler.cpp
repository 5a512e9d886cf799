#include "NvrtcCompiler.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <memory>
#include <stdexcept>

#include "CubinInfo.hpp"
#include "NvrtcLibrary.hpp"
#include "PtxasLog.hpp"
#include "Sha256.hpp"
#include "gemmtune/Errors.hpp"
#include "Quote.hpp"

namespace gemmtune {

namespace {

// Every call goes through the NVRTC loaded at run time (NvrtcLibrary: the pinned 13.5 if found).
const NvrtcLibrary& nv() { return NvrtcLibrary::get(); }

void check(nvrtcResult r, const char* what) {
  if (r != NVRTC_SUCCESS) throw std::runtime_error(fmt::format("NVRTC {} failed: {}", what, nv().nvrtcGetErrorString(r)));
}

// Owns an nvrtcProgram; destroyed on every path out of compile().
struct ProgramDeleter {
  void operator()(nvrtcProgram* p) const {
    nv().nvrtcDestroyProgram(p);
    delete p;
  }
};
using Program = std::unique_ptr<nvrtcProgram, ProgramDeleter>;

std::string programLog(nvrtcProgram p) {
  size_t n = 0;
  check(nv().nvrtcGetProgramLogSize(p, &n), "GetProgramLogSize");
  std::string log(n, '\0');
  check(nv().nvrtcGetProgramLog(p, log.data()), "GetProgramLog");
  while (!log.empty() && log.back() == '\0') log.pop_back();
  return log;
}

}  // namespace

std::vector<std::string> NvrtcCompiler::baseOptions() {
  // -v for ptxas puts registers, shared memory, stack frame and spills into the program log.
  return {"-std=c++17", "--ptxas-options=-v"};
}

std::string NvrtcCompiler::version() { return nv().version(); }

std::string NvrtcCompiler::location() { return nv().path(); }

std::vector<int> NvrtcCompiler::supportedArchs() {
  int n = 0;
  check(nv().nvrtcGetNumSupportedArchs(&n), "GetNumSupportedArchs");
  std::vector<int> archs(static_cast<size_t>(n));
  check(nv().nvrtcGetSupportedArchs(archs.data()), "GetSupportedArchs");
  return archs;
}

void NvrtcCompiler::checkArch(const std::string& arch) {
  auto archs = supportedArchs();
  std::string list;
  for (int a : archs) {
    if (arch == fmt::format("sm_{}", a)) return;
    list += fmt::format("{}sm_{}", list.empty() ? "" : ", ", a);
  }
  throw UsageError(fmt::format("unknown arch {} (NVRTC {} supports: {})", quoteInput(arch), version(), list));
}

CompileResult NvrtcCompiler::compile(const std::string& source, const std::string& nameExpression,
                                     const std::string& arch) {
  return compile(CompileUnit{source, {nameExpression}, {}, {}}, arch);
}

CompileResult NvrtcCompiler::compile(const CompileUnit& unit, const std::string& arch) {
  nv().warnIfOlderThanPinned();
  const std::string& nameExpression = unit.expressions.at(0);
  // ptxas' resource lines are occasionally missing from the program log when many compiles run
  // at once (seen on a 16-core host under full load). Compiling again is cheap next to timing a
  // kernel with unknown resources; if the lines stay missing, the cubin still has the facts.
  constexpr int kAttempts = 3;
  CompileResult out;
  for (int attempt = 1; attempt <= kAttempts; ++attempt) {
    out = compileOnce(unit, arch);
    if (!out.ok) return out;
    if (auto res = parsePtxasLog(out.log, out.loweredName)) {
      out.resources = *res;
      return out;
    }
    spdlog::debug("{}: no ptxas resource lines in the NVRTC log (attempt {} of {})", nameExpression, attempt, kAttempts);
  }
  if (auto res = resourcesFromCubin(out.cubin, out.loweredName, arch)) {
    out.resources = *res;
  } else {
    throw std::runtime_error(fmt::format("NVRTC produced no resource usage for {} (log and cubin)", nameExpression));
  }
  return out;
}

CompileResult NvrtcCompiler::compileOnce(const CompileUnit& unit, const std::string& arch) {
  auto start = std::chrono::steady_clock::now();
  CompileResult out;
  out.arch = arch;
  out.sourceHash = unit.sourceHash();

  std::vector<const char*> headerTexts, headerNames;
  for (const auto& [name, text] : unit.headers) {
    headerNames.push_back(name.c_str());
    headerTexts.push_back(text.c_str());
  }
  Program prog(new nvrtcProgram{});
  check(nv().nvrtcCreateProgram(prog.get(), unit.source.c_str(), "gemmtune_instance.cu",
                                static_cast<int>(headerTexts.size()), headerTexts.data(), headerNames.data()),
        "CreateProgram");
  for (const auto& e : unit.expressions) check(nv().nvrtcAddNameExpression(*prog, e.c_str()), "AddNameExpression");

  std::vector<std::string> opts = baseOptions();
  opts.insert(opts.end(), unit.options.begin(), unit.options.end());
  opts.push_back("-arch=" + arch);
  std::vector<const char*> argv;
  for (const auto& o : opts) argv.push_back(o.c_str());

  nvrtcResult r = nv().nvrtcCompileProgram(*prog, static_cast<int>(argv.size()), argv.data());
  out.log = programLog(*prog);
  if (r == NVRTC_ERROR_COMPILATION) {
    out.ok = false;
    return out;
  }
  check(r, "CompileProgram");

  for (const auto& e : unit.expressions) {
    const char* lowered = nullptr;
    check(nv().nvrtcGetLoweredName(*prog, e.c_str(), &lowered), "GetLoweredName");
    out.loweredNames.emplace_back(lowered);
  }
  out.loweredName = out.loweredNames.front();

  size_t n = 0;
  check(nv().nvrtcGetPTXSize(*prog, &n), "GetPTXSize");
  out.ptx.resize(n);
  check(nv().nvrtcGetPTX(*prog, out.ptx.data()), "GetPTX");
  while (!out.ptx.empty() && out.ptx.back() == '\0') out.ptx.pop_back();

  check(nv().nvrtcGetCUBINSize(*prog, &n), "GetCUBINSize");
  out.cubin.resize(n);
  check(nv().nvrtcGetCUBIN(*prog, out.cubin.data()), "GetCUBIN");

  out.ok = true;
  out.compileSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace gemmtune
