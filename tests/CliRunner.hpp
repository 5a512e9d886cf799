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

}  // namespace gemmtune::test
