#include "PipeIo.hpp"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace gemmtune {

int pollTimeoutMs(PipeClock::time_point deadline) {
  if (deadline == PipeClock::time_point::max()) return -1;
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - PipeClock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
}

namespace {

// Waits until `fd` is ready for `events`; Timeout at the deadline, Closed on a poll error.
PipeIo pollBefore(int fd, short events, PipeClock::time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int r = ::poll(&p, 1, pollTimeoutMs(deadline));
    if (r > 0) return PipeIo::Ok;  // ready, or POLLHUP/POLLERR: the read or write says which
    if (r == 0) return PipeIo::Timeout;
    if (errno != EINTR) return PipeIo::Closed;
  }
}

PipeIo writeAll(int fd, std::string_view bytes, PipeClock::time_point deadline) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EAGAIN) {
      if (PipeIo r = pollBefore(fd, POLLOUT, deadline); r != PipeIo::Ok) return r;
    } else if (n == 0 || errno != EINTR) {
      return PipeIo::Closed;  // EPIPE or any other write error: the reader is gone
    }
  }
  return PipeIo::Ok;
}

}  // namespace

PipeIo writeAllBefore(int fd, std::string_view bytes, PipeClock::time_point deadline) {
  if (fd < 0) return PipeIo::Closed;
  sigset_t pipeSet, old, pending;
  sigemptyset(&pipeSet);
  sigaddset(&pipeSet, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipeSet, &old);
  ::sigpending(&pending);
  const bool alreadyPending = sigismember(&pending, SIGPIPE);
  const PipeIo result = writeAll(fd, bytes, deadline);
  if (result == PipeIo::Closed && !alreadyPending) {
    timespec zero{};
    ::sigtimedwait(&pipeSet, nullptr, &zero);  // consume our SIGPIPE before unblocking
  }
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return result;
}

PipeIo readExactlyBefore(int fd, char* out, std::size_t size, PipeClock::time_point deadline) {
  if (fd < 0) return PipeIo::Closed;  // poll() would skip it and wait out the deadline
  std::size_t done = 0;
  while (done < size) {
    if (PipeIo r = pollBefore(fd, POLLIN, deadline); r != PipeIo::Ok) return r;
    const ssize_t n = ::read(fd, out + done, size - done);
    if (n == 0) return PipeIo::Closed;
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return PipeIo::Closed;
    }
    done += static_cast<std::size_t>(n);
  }
  return PipeIo::Ok;
}

}  // namespace gemmtune
