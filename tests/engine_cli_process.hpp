// CliProcess: the built gemmtune binary running in the background, so a test can signal it
// mid-run (SIGKILL, SIGINT) and then collect its exit code and output.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace gemmtune::test {

class CliProcess {
 public:
  // Starts GEMMTUNE_CLI with `args`; `env` entries are "NAME=value" additions. Output goes to
  // files under `outputDir`.
  CliProcess(const std::vector<std::string>& args, const std::vector<std::string>& env,
             const std::filesystem::path& outputDir);
  ~CliProcess();  // SIGKILLs and reaps a process still running
  CliProcess(const CliProcess&) = delete;
  CliProcess& operator=(const CliProcess&) = delete;

  pid_t pid() const { return pid_; }
  bool running();
  void signal(int sig) const;
  // The exit code (128 + signal when killed by one), or nullopt when still running at the timeout.
  std::optional<int> wait(std::chrono::milliseconds timeout);
  std::string out() const;
  std::string err() const;

 private:
  pid_t pid_ = -1;
  std::optional<int> exitCode_;
  std::filesystem::path outPath_, errPath_;
};

// Live `gemmtune worker` processes of GEMMTUNE_CLI (orphans would hold the GPU).
int liveWorkers();
// Waits until no worker is left; false when some survive `timeout`.
bool noWorkersWithin(std::chrono::milliseconds timeout);

}  // namespace gemmtune::test
