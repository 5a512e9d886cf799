// CompileResult: what one NVRTC compile of one instance produced.
#pragma once

#include <string>
#include <vector>

namespace gemmtune {

// ptxas resource usage of one kernel (from the `--ptxas-options=-v` log).
struct Resources {
  int registers = -1;
  int staticSmemBytes = 0;
  int stackFrameBytes = 0;
  int spillStoreBytes = 0;
  int spillLoadBytes = 0;
  int constBytes = 0;  // cmem[0]: kernel parameters and driver constants
};

struct CompileResult {
  bool ok = false;            // false: compile_error, `log` says why
  std::string log;            // NVRTC program log (ptxas resource lines included)
  std::string ptx;
  std::string cubin;          // raw ELF bytes
  std::string loweredName;    // mangled entry point of the main kernel
  std::vector<std::string> loweredNames;  // every kernel of the program, main first (plans index it)
  std::string arch;           // "sm_90"
  std::string sourceHash;     // CompileUnit::sourceHash() of what was given to NVRTC
  Resources resources;
  double compileSeconds = 0;  // 0 when served from the cache
  bool fromCache = false;
};

// How a row stores every entry point of a program in one text field: space-separated (mangled
// names contain no spaces), main kernel first.
std::string joinLoweredNames(const std::vector<std::string>& names);
std::vector<std::string> splitLoweredNames(const std::string& joined);

}  // namespace gemmtune
