#include "engine_cli_process.hpp"
#include "ExitCodes.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

namespace gemmtune::test {

namespace {

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int exitCodeOf(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

}  // namespace

CliProcess::CliProcess(const std::vector<std::string>& args, const std::vector<std::string>& env,
                       const std::filesystem::path& outputDir) {
  static int serial = 0;
  ++serial;
  outPath_ = outputDir / ("cli-" + std::to_string(serial) + ".out");
  errPath_ = outputDir / ("cli-" + std::to_string(serial) + ".err");
  // Everything the child needs is prepared before fork: it only dup2s, sets env and execs.
  std::string exe = GEMMTUNE_CLI;
  std::vector<std::string> envCopy = env;
  std::vector<char*> argv{exe.data()};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int outFd = ::open(outPath_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  int errFd = ::open(errPath_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  pid_ = ::fork();
  if (pid_ == 0) {
    ::dup2(outFd, 1);
    ::dup2(errFd, 2);
    for (auto& e : envCopy) ::putenv(e.data());
    ::execv(exe.c_str(), argv.data());
    std::_Exit(127);
  }
  ::close(outFd);
  ::close(errFd);
}

CliProcess::~CliProcess() {
  if (pid_ > 0 && !exitCode_) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
}

bool CliProcess::running() {
  if (exitCode_ || pid_ <= 0) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    exitCode_ = exitCodeOf(status);
    return false;
  }
  return true;
}

void CliProcess::signal(int sig) const {
  if (pid_ > 0 && !exitCode_) ::kill(pid_, sig);
}

std::optional<int> CliProcess::wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (running()) {
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return exitCode_;
}

std::string CliProcess::out() const { return slurp(outPath_); }
std::string CliProcess::err() const { return slurp(errPath_); }

int liveWorkers() {
  std::error_code ec;
  const auto cli = std::filesystem::canonical(GEMMTUNE_CLI, ec);
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string pid = entry.path().filename();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code e;
    // A zombie has no exe link: it holds no GPU and is not counted.
    if (std::filesystem::read_symlink(entry.path() / "exe", e) != cli || e) continue;
    std::string cmdline;
    try {
      cmdline = slurp(entry.path() / "cmdline");
    } catch (const std::exception&) {
      continue;  // exited between the listing and this read
    }
    for (size_t start = 0; start < cmdline.size();) {
      size_t end = cmdline.find('\0', start);
      if (end == std::string::npos) end = cmdline.size();
      if (cmdline.compare(start, end - start, "worker") == 0) {
        ++n;
        break;
      }
      start = end + 1;
    }
  }
  return n;
}

bool noWorkersWithin(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (liveWorkers() > 0) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

}  // namespace gemmtune::test
