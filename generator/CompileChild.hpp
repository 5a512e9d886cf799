// CompileChild: one NVRTC compile in a child process (`gemmtune compile-unit REQUEST`, hidden).
// NVRTC compiles on the threads of one process barely scale: measured on the H100 host (16
// cores, NVRTC 13.5), one CUTLASS instance took 6.4 s, sixteen on 16 threads of one process
// 48.7 s, sixteen as 16 processes 8.1 s. A child also keeps an NVRTC crash or hang from taking
// the tuner down: it becomes that one configuration's compile_error.
#pragma once

#include <optional>
#include <string>

#include "CompileCache.hpp"
#include "CompileResult.hpp"
#include "CompileUnit.hpp"

namespace gemmtune {

struct ChildCompile {
  // The child's result (read back from `cache`), or a failed one when the child crashed, was
  // killed or hung past the deadline.
  std::optional<CompileResult> result;
  // Set when no result came back because children cannot work here (the program cannot start,
  // the cache cannot be written): why, for a warning. The caller compiles in-process instead.
  std::string unusable;
};

// A compile that has not finished after this long is killed and recorded as failed.
constexpr int kCompileDeadlineSeconds = 600;

// Parent side: runs `<exe> compile-unit <request> <error file>`, which compiles `unit` for
// `arch` and stores the result in `cache` under `key`. Started like every helper process
// (base/ChildProcess.hpp): its own process group (Ctrl-C stops the tuner's queue, not a compile
// half done), killed with the thread that started it.
ChildCompile compileInChild(const std::string& exe, const CompileUnit& unit, const std::string& arch,
                            const CompileCache& cache, const std::string& key, int deadlineSeconds = kCompileDeadlineSeconds);

// Child side: reads the request, compiles, stores into the cache it names. Exit code 0 when
// stored (a failed compile is stored too); otherwise 74 with the reason in `errorPath`.
int runCompileChild(const std::string& requestPath, const std::string& errorPath);

}  // namespace gemmtune
