// CubinInfo: facts read straight from a CUBIN (ELF) — the register count recorded for each
// kernel in .nv.info, and the size of its .nv.shared section. Used to cross-check ptxas' log.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gemmtune {

struct CubinKernelInfo {
  int registers = -1;
  long long sharedSectionBytes = 0;  // size of .nv.shared.<kernel>; 0 when absent
};

// nullopt when `cubin` is not an ELF64 file or holds no such kernel. Never reads out of bounds.
std::optional<CubinKernelInfo> readCubinKernelInfo(std::string_view cubin, std::string_view kernel);

}  // namespace gemmtune
