#include "CliRunner.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

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
  char outPath[] = "/tmp/gemmtune-cli-out-XXXXXX";
  char errPath[] = "/tmp/gemmtune-cli-err-XXXXXX";
  int outFd = ::mkstemp(outPath);
  int errFd = ::mkstemp(errPath);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(outFd, 1);
    ::dup2(errFd, 2);
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
