#include "ChildProcess.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <thread>

#include "ChildExec.hpp"
#include "WorkerWire.hpp"
#include "Errors.hpp"

namespace gemmtune {

namespace {

int msLeft(ChildProcess::Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - ChildProcess::Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
}

void closeFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

ChildProcess::ChildProcess(const std::vector<std::string>& argv) {
  if (argv.empty()) throw std::invalid_argument("ChildProcess: empty argv");
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);

  int toChild[2], fromChild[2], errPipe[2];
  if (::pipe2(toChild, O_CLOEXEC) != 0) throw UnavailableError(fmt::format("cannot create worker pipe: {}", std::strerror(errno)));
  if (::pipe2(fromChild, O_CLOEXEC) != 0) {
    ::close(toChild[0]), ::close(toChild[1]);
    throw UnavailableError(fmt::format("cannot create worker pipe: {}", std::strerror(errno)));
  }
  if (::pipe2(errPipe, O_CLOEXEC) != 0) {
    for (int fd : {toChild[0], toChild[1], fromChild[0], fromChild[1]}) ::close(fd);
    throw UnavailableError(fmt::format("cannot create worker pipe: {}", std::strerror(errno)));
  }

  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid == 0) execChild(parent, toChild[0], fromChild[1], errPipe[1], cargv.data());
  int forkErrno = errno;
  for (int fd : {toChild[0], fromChild[1], errPipe[1]}) ::close(fd);
  toChild_ = toChild[1];
  fromChild_ = fromChild[0];
  if (pid < 0) {
    closeFd(toChild_), closeFd(fromChild_), ::close(errPipe[0]);
    throw UnavailableError(fmt::format("cannot start worker {}: fork: {}", argv[0], std::strerror(forkErrno)));
  }
  pid_ = pid;
  group_ = pid;
  ::setpgid(pid, pid);  // also here: whichever of parent and child runs first, the group exists

  int childErrno = 0;
  ssize_t n;
  do n = ::read(errPipe[0], &childErrno, sizeof childErrno);
  while (n < 0 && errno == EINTR);
  ::close(errPipe[0]);
  if (n == static_cast<ssize_t>(sizeof childErrno)) {
    reap(std::chrono::milliseconds(1000));
    closeFd(toChild_), closeFd(fromChild_);
    throw UnavailableError(fmt::format("cannot start worker {}: {}", argv[0], std::strerror(childErrno)));
  }
  ::fcntl(toChild_, F_SETFL, ::fcntl(toChild_, F_GETFL) | O_NONBLOCK);
}

ChildProcess::~ChildProcess() {
  kill();
  closeFd(toChild_);
  closeFd(fromChild_);
}

ChildProcess::Io ChildProcess::send(const std::string& bytes, Clock::time_point deadline) {
  if (toChild_ < 0) return Io::Closed;
  sigset_t pipeSet, old, pending;
  sigemptyset(&pipeSet);
  sigaddset(&pipeSet, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipeSet, &old);
  ::sigpending(&pending);
  const bool alreadyPending = sigismember(&pending, SIGPIPE);

  Io result = Io::Ok;
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(toChild_, bytes.data() + done, bytes.size() - done);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      pollfd p{toChild_, POLLOUT, 0};
      int r = ::poll(&p, 1, msLeft(deadline));
      if (r == 0) {
        result = Io::Timeout;
        break;
      }
      if (r < 0 && errno != EINTR) {
        result = Io::Closed;
        break;
      }
      continue;
    }
    result = Io::Closed;  // EPIPE or any other write error: the reader is gone
    break;
  }
  if (result == Io::Closed && !alreadyPending) {
    timespec zero{};
    ::sigtimedwait(&pipeSet, nullptr, &zero);  // consume our SIGPIPE before unblocking
  }
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return result;
}

namespace {
ChildProcess::Io readExactly(int fd, char* out, std::size_t size, ChildProcess::Clock::time_point deadline) {
  std::size_t done = 0;
  while (done < size) {
    pollfd p{fd, POLLIN, 0};
    int r = ::poll(&p, 1, msLeft(deadline));
    if (r == 0) return ChildProcess::Io::Timeout;
    if (r < 0) {
      if (errno == EINTR) continue;
      return ChildProcess::Io::Closed;
    }
    ssize_t n = ::read(fd, out + done, size - done);
    if (n == 0) return ChildProcess::Io::Closed;
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return ChildProcess::Io::Closed;
    }
    done += static_cast<std::size_t>(n);
  }
  return ChildProcess::Io::Ok;
}
}  // namespace

ChildProcess::Io ChildProcess::receive(std::string& payload, Clock::time_point deadline) {
  if (fromChild_ < 0) return Io::Closed;
  unsigned char header[wire::kHeaderBytes];
  if (Io r = readExactly(fromChild_, reinterpret_cast<char*>(header), sizeof header, deadline); r != Io::Ok) return r;
  auto n = wire::payloadLength(header);
  if (!n) return Io::Garbage;
  payload.assign(*n, '\0');
  return readExactly(fromChild_, payload.data(), payload.size(), deadline);
}

void ChildProcess::killAsync() const {
  pid_t g = group_.load();
  if (g > 0) ::kill(-g, SIGKILL);
}

void ChildProcess::kill() {
  if (!running()) return;
  killAsync();
  int status = 0;
  pid_t r;
  do r = ::waitpid(pid_, &status, 0);
  while (r < 0 && errno == EINTR);
  reaped_ = true;
  group_ = -1;
  exitText_ = r == pid_ ? describe(status) : "lost (waitpid failed)";
  closeFd(toChild_);
  closeFd(fromChild_);
}

std::string ChildProcess::reap(std::chrono::milliseconds grace) {
  if (!running()) return exitText_;
  auto until = Clock::now() + grace;
  while (true) {
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      reaped_ = true;
      exitText_ = describe(status);
      // Anything the worker left behind in its group goes too.
      pid_t g = group_.exchange(-1);
      if (g > 0) ::kill(-g, SIGKILL);
      closeFd(toChild_);
      closeFd(fromChild_);
      return exitText_;
    }
    if (r < 0 && errno != EINTR) break;
    if (Clock::now() >= until) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill();
  return exitText_;
}

std::string ChildProcess::describe(int status) const {
  if (WIFEXITED(status)) return fmt::format("exited with code {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt::format("killed by signal {} ({})", WTERMSIG(status), ::strsignal(WTERMSIG(status)));
  return "ended";
}

}  // namespace gemmtune
