// Exception types that carry the exit code the CLI maps them to (sysexits-style, see README).
// Each message is one line a user can act on.
#pragma once

#include <stdexcept>
#include <string>

namespace gemmtune {

enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,      // nothing to report (e.g. no tuned rows yet)
  kExitUsage = 2,        // bad command line or parameters
  kExitDataError = 65,   // damaged or foreign database / input file
  kExitUnavailable = 69, // no CUDA driver or GPU, or a needed tool is missing
  kExitIoError = 74,     // cannot read or write a file
  kExitGpuUnhealthy = 75 // the GPU keeps failing a known-good kernel
};

class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ExitCode code() const noexcept { return code_; }

 private:
  ExitCode code_;
};

struct UsageError : Error {
  explicit UsageError(const std::string& m) : Error(kExitUsage, m) {}
};
struct DataError : Error {
  explicit DataError(const std::string& m) : Error(kExitDataError, m) {}
};
struct NoGpuError : Error {
  explicit NoGpuError(const std::string& m) : Error(kExitUnavailable, m) {}
};
struct UnavailableError : Error {
  explicit UnavailableError(const std::string& m) : Error(kExitUnavailable, m) {}
};
struct IoError : Error {
  explicit IoError(const std::string& m) : Error(kExitIoError, m) {}
};

}  // namespace gemmtune
