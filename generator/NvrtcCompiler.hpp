// NvrtcCompiler: one NVRTC compile of one template instance for one sm_XY, yielding PTX and CUBIN
// together. A compile error is a result (ok = false, log kept); any other NVRTC failure throws,
// as does a missing NVRTC (UnavailableError). The first compile in a process warns once when the
// NVRTC found is older than the pinned 13.5 (NvrtcLibrary).
#pragma once

#include <string>
#include <vector>

#include "CompileResult.hpp"
#include "CompileUnit.hpp"

namespace gemmtune {

class NvrtcCompiler {
 public:
  // Options every instance is compiled with (besides -arch). Part of every cache key.
  static std::vector<std::string> baseOptions();
  // "13.5": the NVRTC loaded at run time (NvrtcLibrary). Part of every cache key.
  static std::string version();
  // The file it was loaded from, e.g. "/opt/gemmtune/lib/gemmtune/nvrtc/libnvrtc.so.13".
  static std::string location();
  // The sm_XY values this NVRTC can target, e.g. {75, 80, 86, 89, 90, ...}.
  static std::vector<int> supportedArchs();
  // Throws UsageError unless `arch` is "sm_XY" with XY in supportedArchs().
  static void checkArch(const std::string& arch);

  // Compiles `source` and instantiates `nameExpression` for `arch` ("sm_90"). Thread-safe: each
  // call owns its nvrtcProgram.
  static CompileResult compile(const std::string& source, const std::string& nameExpression,
                               const std::string& arch);
  // Every kernel of `unit` in one program; resources are the main kernel's.
  static CompileResult compile(const CompileUnit& unit, const std::string& arch);

 private:
  static CompileResult compileOnce(const CompileUnit& unit, const std::string& arch);
};

}  // namespace gemmtune
