// CubinInfo: facts read straight from a CUBIN (ELF) — the register count recorded for each
// kernel in .nv.info, and the size of its .nv.shared section. Used to cross-check ptxas' log.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "CompileResult.hpp"

namespace gemmtune {

struct CubinKernelInfo {
  int registers = -1;
  long long sharedSectionBytes = 0;  // size of .nv.shared.<kernel>; 0 when absent
};

// nullopt when `cubin` is not an ELF64 file or holds no such kernel. Never reads out of bounds.
std::optional<CubinKernelInfo> readCubinKernelInfo(std::string_view cubin, std::string_view kernel);

// Registers and static shared memory of `kernel` from the cubin alone, for when ptxas' log lines
// are missing. On sm_90 and newer the .nv.shared section also holds the 1 KiB the hardware
// reserves per block (measured: smem_bs32 declares 8192 B, its section is 9216 B), which is
// subtracted. Spills and stack are not recorded in the cubin and come back as 0.
std::optional<Resources> resourcesFromCubin(std::string_view cubin, std::string_view kernel, std::string_view arch);

}  // namespace gemmtune
