#include "ChildExec.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <initializer_list>

namespace gemmtune {

[[noreturn]] void execChild(pid_t parent, int in, int out, int errPipe, char* const* argv) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(126);  // the parent died before prctl took effect
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);  // the spawning thread's mask would be inherited
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGHUP}) ::sigaction(s, &dfl, nullptr);
  if (::dup2(in, 0) < 0 || ::dup2(out, 1) < 0) {
    int e = errno;
    if (errPipe >= 0) (void)!::write(errPipe, &e, sizeof e);
    ::_exit(127);
  }
  // errPipe is close-on-exec: it reads EOF in the parent exactly when exec succeeds.
  for (int fd = 3; fd < 1024; ++fd)
    if (fd != errPipe) ::close(fd);
  ::execv(argv[0], argv);
  int e = errno;
  if (errPipe >= 0) (void)!::write(errPipe, &e, sizeof e);
  ::_exit(127);
}


}  // namespace gemmtune
