#include "ChildProcess.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <utility>

#include "ChildExec.hpp"
#include "gemmtune/Errors.hpp"
#include "PipeIo.hpp"

namespace gemmtune {

namespace {

// A descriptor owned until released: every early exit of the start closes what it opened.
struct Fd {
  int fd = -1;
  Fd() = default;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  int release() { return std::exchange(fd, -1); }
};

// Both ends close-on-exec, so no other child started meanwhile (other threads fork too) keeps a
// copy past its exec; execChild's dup2 onto stdin/stdout clears the flag where it is wanted.
bool makePipe(Fd& readEnd, Fd& writeEnd) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  readEnd.fd = fds[0];
  writeEnd.fd = fds[1];
  return true;
}

void closeFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// A descriptor that becomes readable when the child exits (Linux 5.3), close-on-exec; -1 when
// the kernel or a seccomp filter refuses it. The child is not reaped yet, so `pid` is still ours.
int openPidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  return -1;
#endif
}

// The errno the child wrote before _exit(127), or 0 when the pipe read EOF: exec succeeded.
int execErrno(int errRead) {
  int childErrno = 0;
  ssize_t n;
  do n = ::read(errRead, &childErrno, sizeof childErrno);
  while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(sizeof childErrno) ? childErrno : 0;
}

UnavailableError startError(const std::string& name, const std::string& program, const char* step, int err) {
  std::string what = "cannot start " + name + " " + program + ": ";
  if (step) what += std::string(step) + ": ";
  return UnavailableError(what + std::strerror(err));
}

}  // namespace

ChildProcess::ChildProcess(const std::string& name, const std::vector<std::string>& argv, Stdio stdio) {
  if (argv.empty()) throw std::invalid_argument("ChildProcess: empty argv");
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);

  Fd childIn, childOut, parentIn, parentOut, errRead, errWrite;
  if (stdio == Stdio::Pipes) {
    if (!makePipe(childIn, parentIn) || !makePipe(parentOut, childOut)) throw startError(name, argv[0], "pipe", errno);
  } else {
    childIn.fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    if (childIn.fd < 0) throw startError(name, argv[0], "/dev/null", errno);
  }
  if (!makePipe(errRead, errWrite)) throw startError(name, argv[0], "pipe", errno);

  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) execChild(parent, childIn.fd, childOut.fd >= 0 ? childOut.fd : childIn.fd, errWrite.fd, cargv.data());
  if (pid < 0) throw startError(name, argv[0], "fork", errno);
  pid_ = pid;
  group_ = pid;
  ::setpgid(pid, pid);  // also here: whichever of parent and child runs first, the group exists
  pidfd_ = openPidfd(pid);
  toChild_ = parentIn.release();
  fromChild_ = parentOut.release();
  errWrite.reset();  // the child's copy alone is left: EOF at its exec

  if (const int childErrno = execErrno(errRead.fd); childErrno != 0) {
    reap(std::chrono::milliseconds(1000));  // it _exit()s right after writing; closes our ends
    throw startError(name, argv[0], nullptr, childErrno);
  }
  if (toChild_ >= 0) ::fcntl(toChild_, F_SETFL, ::fcntl(toChild_, F_GETFL) | O_NONBLOCK);
}

ChildProcess::~ChildProcess() {
  kill();
  closeFd(toChild_);
  closeFd(fromChild_);
  closeFd(pidfd_);
}

bool ChildProcess::waitUntil(Clock::time_point deadline) {
  while (running() && !tryReap()) {
    const int ms = pollTimeoutMs(deadline);
    if (ms == 0) return false;
    sleepUntilExit(ms);
  }
  return true;
}

// Blocks up to `ms`, or until the child exits if that is sooner.
void ChildProcess::sleepUntilExit(int ms) {
  if (pidfd_ >= 0) {
    pollfd p{pidfd_, POLLIN, 0};
    if (::poll(&p, 1, ms) >= 0 || errno == EINTR) return;
    closeFd(pidfd_);  // a pidfd that cannot be polled: sleep as below from now on
  }
  // Without a pidfd (kernels before 5.3, some seccomp filters) nothing wakes this thread when
  // this one child exits: SIGCHLD goes to the whole process, whose other threads have children
  // of their own. Short sleeps between waitpid(WNOHANG) checks are the portable fallback.
  std::this_thread::sleep_for(std::chrono::milliseconds(ms < 0 ? 10 : std::min(ms, 10)));
}

void ChildProcess::killAsync() const {
  pid_t g = group_.load();
  if (g > 0) ::kill(-g, SIGKILL);
}

void ChildProcess::kill() {
  if (!running()) return;
  killAsync();
  siginfo_t info{};
  int r;
  do r = ::waitid(P_PID, pid_, &info, WEXITED | WNOWAIT);  // exited, not yet reaped
  while (r < 0 && errno == EINTR);
  reapExited();
}

std::string ChildProcess::reap(std::chrono::milliseconds grace) {
  if (!waitUntil(Clock::now() + grace)) kill();
  return exitText_;
}

bool ChildProcess::tryReap() {
  siginfo_t info{};
  int r;
  do r = ::waitid(P_PID, pid_, &info, WEXITED | WNOHANG | WNOWAIT);
  while (r < 0 && errno == EINTR);
  if (r == 0 && info.si_pid == 0) return false;  // still running (r < 0: nobody is left to wait for)
  reapExited();
  return true;
}

// The child has exited (or cannot be waited for). Anything it left behind in its group is killed
// before the child is reaped: until then the zombie leader holds the group's id, which a reaped
// leader's would not (the id could already name another process group).
void ChildProcess::reapExited() {
  if (pid_t g = group_.exchange(-1); g > 0) ::kill(-g, SIGKILL);
  int status = 0;
  pid_t r;
  do r = ::waitpid(pid_, &status, 0);
  while (r < 0 && errno == EINTR);
  finish(r == pid_, status);
}

void ChildProcess::finish(bool statusKnown, int waitStatus) {
  reaped_ = true;
  closeFd(toChild_);
  closeFd(fromChild_);
  closeFd(pidfd_);
  if (statusKnown && WIFEXITED(waitStatus)) {
    exitCode_ = WEXITSTATUS(waitStatus);
    exitText_ = "exited with code " + std::to_string(*exitCode_);
  } else if (statusKnown && WIFSIGNALED(waitStatus)) {
    termSignal_ = WTERMSIG(waitStatus);
    exitText_ = "killed by signal " + std::to_string(termSignal_) + " (" + ::strsignal(termSignal_) + ")";
  } else {
    exitText_ = statusKnown ? "ended" : "lost (waitpid failed)";
  }
}

}  // namespace gemmtune
