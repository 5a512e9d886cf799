// ChildProcess: one worker process seen from the parent — started in its own process group with
// its stdin/stdout on pipes, framed I/O bounded by deadlines, and a kill that takes the whole
// group (anything the worker started included) down.
//
// The child gets PR_SET_PDEATHSIG(SIGKILL): it dies when the thread that started it ends, so
// start workers from a thread that lives as long as the tuning run (e.g. the main thread).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

namespace gemmtune {

class ChildProcess {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Io { Ok, Timeout, Closed, Garbage };

  // Throws UnavailableError when argv[0] cannot be executed (with the errno text).
  explicit ChildProcess(const std::vector<std::string>& argv);
  ~ChildProcess();  // kills the group if still running; never throws
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }  // also the process group id
  bool running() const { return pid_ > 0 && !reaped_; }

  // Writes all of `bytes` before `deadline`. Closed: the child stopped reading (EPIPE); SIGPIPE
  // is held back for the calling thread only, so the process's own disposition is untouched.
  Io send(const std::string& bytes, Clock::time_point deadline);
  // Reads one frame's payload (see WorkerWire). Garbage: the header announced an absurd length.
  Io receive(std::string& payload, Clock::time_point deadline);

  // SIGKILL to the whole process group, then reaps the child. Idempotent.
  void kill();
  // Waits up to `grace` for the child to exit on its own, then kill()s it. Returns how it ended:
  // "exited with code 3", "killed by signal 9 (Killed)".
  std::string reap(std::chrono::milliseconds grace);
  // Async-signal-safe and thread-safe: SIGKILL to the group without reaping (reap() follows in
  // the owning thread).
  void killAsync() const;

 private:
  std::string describe(int waitStatus) const;
  pid_t pid_ = -1;
  std::atomic<pid_t> group_{-1};
  bool reaped_ = false;
  std::string exitText_;
  int toChild_ = -1, fromChild_ = -1;
};

}  // namespace gemmtune
