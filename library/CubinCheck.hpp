// CubinCheck: is a blob from the database (or the compile cache) safe to hand to the driver, and
// is it the kernel its row claims? cuModuleLoadData takes no length, so a truncated or forged ELF
// would make the driver read past the blob; everything it will follow must lie inside.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "Family.hpp"
#include "gemmtune/GpuSpec.hpp"

namespace gemmtune::library {

// Why `cubin` is not a well-formed 64-bit little-endian CUDA ELF whose headers, sections and
// segments all lie inside it; nullopt when it is.
std::optional<std::string> cubinProblem(std::string_view cubin);

// The Itanium-mangled entry point NVRTC gives `config`'s kernel, e.g.
// "_Z14sgemm_tiled_2dILi64ELi64ELi8ELb1EE" followed by the parameter types.
std::string manglePrefix(const Config& config);

// Why the stored binary cannot stand for `config` on `gpu` (not a sound ELF, an entry point of
// another configuration, a kernel missing from it, more registers than the GPU allows by the
// limits rule); nullopt if it can. loweredNames[0] is the main kernel.
std::optional<std::string> storedBinaryProblem(const Config& config, std::string_view cubin,
                                               const std::vector<std::string>& loweredNames, const GpuSpec& gpu);

}  // namespace gemmtune::library
