// CompileUnit: everything one NVRTC program is made of — the template source, the kernels to
// instantiate (main first), the family's extra options and the headers it includes. Its hash
// is the "source hash" of every cache key.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace gemmtune {

struct CompileUnit {
  std::string source;
  std::vector<std::string> expressions;  // name expressions; [0] is the main kernel
  std::vector<std::string> options;      // beyond NvrtcCompiler::baseOptions() and -arch
  std::vector<std::pair<std::string, std::string>> headers;  // (include name, text)
  std::vector<std::string> headerTrees;  // "cutlass 4.2.0": libraries included from outside (their -I are in options)

  // sha256 of the source alone when there are no headers or header trees (so keys of plain
  // templates never change), else of the source, every header with its name and every tree's
  // name and version.
  std::string sourceHash() const;
};

}  // namespace gemmtune
