// The child side of fork + exec for the helper processes gemmtune starts (the GPU worker, NVRTC
// compiles): only async-signal-safe calls, because the parent has other threads. The parent's
// side is base/ChildProcess.hpp.
#pragma once

#include <sys/types.h>

namespace gemmtune {

// In the child after fork(): its own process group (a terminal's Ctrl-C reaches the parent,
// which decides), killed when the thread that forked it dies, an empty signal mask and default
// dispositions, `in`/`out` as stdin/stdout, every other descriptor above 2 closed but `errPipe`
// (close-on-exec; errno is written to it if exec fails, when it is >= 0), then execv(argv[0]).
// Exit 126 when the parent already died, 127 when exec failed.
[[noreturn]] void execChild(pid_t parent, int in, int out, int errPipe, char* const* argv);

}  // namespace gemmtune
