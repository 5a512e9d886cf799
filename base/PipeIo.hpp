// PipeIo: whole reads and writes on a pipe, bounded by a deadline — how the parent talks to a
// helper process (base/ChildProcess.hpp) without a hung or dead child hanging or killing it.
#pragma once

#include <chrono>
#include <cstddef>
#include <string_view>

namespace gemmtune {

using PipeClock = std::chrono::steady_clock;

enum class PipeIo {
  Ok,
  Timeout,  // the deadline passed first
  Closed    // the other end is gone (EOF, EPIPE), or `fd` is -1
};

// Writes all of `bytes` to `fd` before `deadline` (O_NONBLOCK for the deadline to hold while the
// reader does not read; a blocking `fd` waits as long as it takes). SIGPIPE is held back for the
// calling thread only, so the process's own disposition is untouched: a reader that went away
// is Closed, not the death of the writer.
PipeIo writeAllBefore(int fd, std::string_view bytes, PipeClock::time_point deadline);

// Reads exactly `size` bytes from `fd` into `out` before `deadline`. Closed: EOF came first.
PipeIo readExactlyBefore(int fd, char* out, std::size_t size, PipeClock::time_point deadline);

// The milliseconds left until `deadline` as a poll() timeout: 0 once it passed, rounded up
// otherwise (a deadline 0.4 ms away is not "now"), capped far below INT_MAX; -1 (no timeout) for
// time_point::max(), "never": the worker waits for its next request as long as the tuner lives.
int pollTimeoutMs(PipeClock::time_point deadline);

}  // namespace gemmtune
