// PtxasLog: reads a kernel's resource usage out of an NVRTC log made with --ptxas-options=-v.
#pragma once

#include <optional>
#include <string_view>

#include "CompileResult.hpp"

namespace gemmtune {

// Resources of the entry function `loweredName`; nullopt when the log has no lines for it.
std::optional<Resources> parsePtxasLog(std::string_view log, std::string_view loweredName);

}  // namespace gemmtune
