// The exit codes of the gemmtune CLI and its worker (sysexits-style, see README), and how each
// exception type maps to one. Internal: the installed header include/gemmtune/Errors.hpp holds
// the exception types alone.
#pragma once

#include <string>

#include "gemmtune/Errors.hpp"

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

// An internal error whose exit code is decided where it is thrown (SQLite's result codes).
class CodedError : public Error {
 public:
  CodedError(ExitCode code, const std::string& message) : Error(message), code_(code) {}
  ExitCode code() const noexcept { return code_; }

 private:
  ExitCode code_;
};

// The exit code for an exception by its type; a plain Error is kExitFailure.
ExitCode exitCodeOf(const Error& e) noexcept;
// The exception type of an exit code (how the worker's refusals cross the pipe), thrown.
[[noreturn]] void throwWithExitCode(int code, const std::string& message);

}  // namespace gemmtune
