// CliRunner: runs the built gemmtune binary with arguments and captures stdout, stderr and the
// exit code, for tests of the command-line interface.
#pragma once

#include <string>
#include <vector>

namespace gemmtune::test {

struct CliOutput {
  int exitCode = -1;
  std::string out;
  std::string err;
};

// Runs GEMMTUNE_CLI with `args` (no shell involved); `env` entries are "NAME=value" additions.
CliOutput runCli(const std::vector<std::string>& args, const std::vector<std::string>& env = {});

// Hostile conditions for one run (tests of issue 13).
struct CliConditions {
  std::vector<std::string> env;
  std::string stdoutPath;       // e.g. /dev/full; then CliOutput::out stays empty
  bool unprivileged = false;    // run as nobody when the tests run as root (read-only files)
  long long fileSizeLimit = -1; // RLIMIT_FSIZE in bytes: writes beyond fail as on a full disk
};
CliOutput runCliUnder(const std::vector<std::string>& args, const CliConditions& conditions);

}  // namespace gemmtune::test
