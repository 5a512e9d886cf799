// ChildProcess: a helper process seen from the parent (the GPU worker, an NVRTC compile) —
// started in its own process group with its stdin/stdout on pipes or on /dev/null, waited for
// against a deadline, killed with its whole group (anything it started included), reaped, and
// how it ended told in one format. The child's half of the start is base/ChildExec.hpp; reads
// and writes on the pipes are base/PipeIo.hpp.
//
// The child gets PR_SET_PDEATHSIG(SIGKILL): it dies when the *thread* that started it ends, so
// start a child from a thread that lives as long as the child is needed (the worker: the main
// thread of the tuning run; a compile: the pool thread that waits for it).
//
// Not thread-safe, except killAsync().
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace gemmtune {

class ChildProcess {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Stdio { Pipes, DevNull };

  // Starts argv (argv[0] a path: no PATH search). Throws UnavailableError when it cannot start,
  // naming it by `name`: "cannot start worker /x/gemmtune: No such file or directory", or with
  // the step that failed ("...: fork: Resource temporarily unavailable").
  ChildProcess(const std::string& name, const std::vector<std::string>& argv, Stdio stdio);
  ~ChildProcess();  // kills the group if still running; never throws
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }  // also the process group id
  bool running() const { return !reaped_; }

  // Stdio::Pipes: the parent's ends, the child's stdin (O_NONBLOCK, for writeAllBefore's
  // deadline) and stdout; -1 with Stdio::DevNull and once the child is reaped.
  int input() const { return toChild_; }
  int output() const { return fromChild_; }

  // Waits for the child to exit until `deadline`; true once it has exited and is reaped. Sleeps
  // on a pidfd, which becomes readable when the child exits: no polling.
  bool waitUntil(Clock::time_point deadline);
  // SIGKILL to the whole process group, then reaps the child. Idempotent.
  void kill();
  // Waits up to `grace` for the child to exit on its own, then kill()s it. Returns exitText().
  std::string reap(std::chrono::milliseconds grace);
  // Async-signal-safe and thread-safe: SIGKILL to the group without reaping (kill(), reap() or
  // waitUntil() follows in the owning thread).
  void killAsync() const;

  // How it ended, once reaped: "exited with code 3", "killed by signal 9 (Killed)", or "lost
  // (waitpid failed)" when the status could not be read; empty while it runs.
  const std::string& exitText() const { return exitText_; }
  // The exit code when it exited on its own; nullopt while it runs or when a signal ended it.
  std::optional<int> exitCode() const { return exitCode_; }
  // The signal that ended it, 0 when none did.
  int termSignal() const { return termSignal_; }

 private:
  bool tryReap();
  void reapExited();
  void sleepUntilExit(int ms);
  void finish(bool statusKnown, int waitStatus);

  pid_t pid_ = -1;
  // -1 from just before the reap: the group is only killed while its zombie leader holds the id
  // (killAsync() racing the reap itself is the one exception: a window of one system call).
  std::atomic<pid_t> group_{-1};
  bool reaped_ = false;
  std::string exitText_;
  std::optional<int> exitCode_;
  int termSignal_ = 0;
  int toChild_ = -1, fromChild_ = -1, pidfd_ = -1;
};

}  // namespace gemmtune
