#include "CliRunner.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace gemmtune::test {

namespace {
std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

CliOutput runCli(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  CliConditions conditions;
  conditions.env = env;
  return runCliUnder(args, conditions);
}

CliOutput runCliUnder(const std::vector<std::string>& args, const CliConditions& conditions) {
  const auto& env = conditions.env;
  char outPath[] = "/tmp/gemmtune-cli-out-XXXXXX";
  char errPath[] = "/tmp/gemmtune-cli-err-XXXXXX";
  int outFd = ::mkstemp(outPath);
  int errFd = ::mkstemp(errPath);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(outFd, 1);
    ::dup2(errFd, 2);
    if (!conditions.stdoutPath.empty()) {
      int fd = ::open(conditions.stdoutPath.c_str(), O_WRONLY);
      if (fd < 0) std::_Exit(126);
      ::dup2(fd, 1);
    }
    if (conditions.fileSizeLimit >= 0) {
      ::signal(SIGXFSZ, SIG_IGN);  // an over-long write fails with EFBIG, as ENOSPC would
      struct rlimit limit {static_cast<rlim_t>(conditions.fileSizeLimit), static_cast<rlim_t>(conditions.fileSizeLimit)};
      ::setrlimit(RLIMIT_FSIZE, &limit);
    }
    if (conditions.unprivileged && ::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) std::_Exit(126);
    for (const auto& e : env) ::putenv(const_cast<char*>(e.c_str()));
    std::vector<char*> argv;
    std::string exe = GEMMTUNE_CLI;
    argv.push_back(exe.data());
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(exe.c_str(), argv.data());
    std::_Exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(outFd);
  ::close(errFd);
  CliOutput r;
  r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(outPath);
  r.err = slurp(errPath);
  ::unlink(outPath);
  ::unlink(errPath);
  return r;
}

}  // namespace gemmtune::test
