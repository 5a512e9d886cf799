// CompileChild: one NVRTC compile in a child process (`gemmtune compile-unit REQUEST`, hidden).
// NVRTC compiles on the threads of one process barely scale: measured on the H100 host (16
// cores, NVRTC 13.5), one CUTLASS instance took 6.4 s, sixteen on 16 threads of one process
// 48.7 s, sixteen as 16 processes 8.1 s. A child also keeps an NVRTC crash from taking the
// tuner down: it becomes that one configuration's compile_error.
#pragma once

#include <optional>
#include <string>

#include "CompileCache.hpp"
#include "CompileResult.hpp"
#include "CompileUnit.hpp"

namespace gemmtune {

// Parent side: runs `<exe> compile-unit <request>`, which compiles `unit` for `arch` and stores
// the result in `cache` under `key`, and returns that result. A child killed by a crash signal
// gives a failed result that says so. nullopt when no result came back for another reason (the
// program could not start, the cache could not be written, the child was interrupted): the
// caller then compiles in-process.
std::optional<CompileResult> compileInChild(const std::string& exe, const CompileUnit& unit, const std::string& arch,
                                            const CompileCache& cache, const std::string& key);

// Child side: reads the request file, compiles, stores into the cache it names. Exit code 0 when
// stored (a failed compile is stored too), 70 otherwise (the reason on stderr).
int runCompileChild(const std::string& requestPath);

}  // namespace gemmtune
