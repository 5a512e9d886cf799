// The exceptions gemmtune throws to code that calls it. Library::best() throws UsageError and
// NoGpuError (see Library.hpp); sgemm() throws nothing. Each message is one line a user can act on.
#pragma once

#include <stdexcept>
#include <string>

namespace gemmtune {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A bad argument, parameter, name or command line.
struct UsageError : Error {
  using Error::Error;
};
// A damaged or foreign database or input file.
struct DataError : Error {
  using Error::Error;
};
// No CUDA driver or no such GPU.
struct NoGpuError : Error {
  using Error::Error;
};
// Something needed is missing (a tool, a library, a worker).
struct UnavailableError : Error {
  using Error::Error;
};
// A file cannot be read or written.
struct IoError : Error {
  using Error::Error;
};
// The GPU failed a known-good kernel on every attempt: results from it cannot be trusted.
struct GpuUnhealthyError : Error {
  using Error::Error;
};

}  // namespace gemmtune
