// CallRecorder: record mode of the cuBLAS drop-in ($GEMMTUNE_RECORD=FILE). Every well-formed FP32
// GEMM the program calls, served or forwarded, is counted by problem in the row-major view the
// tuner speaks (library/GemmCall's asRowMajor) with an estimated time per call, and appended to
// FILE as `tune --shapes` lines:
//
//     1024x4096x4096 tn batch=1 0.8125  # calls=25
//
// (SIZE LAYOUT batch=N WEIGHT, the weight being the estimated milliseconds spent). A flush appends
// what was counted since the previous one, holding an exclusive lock on the file (flock), so
// several processes may record into one file; `tune --shapes` adds the weights of a problem's
// lines. Flushes happen on a call once the period has passed, and at exit. The time is estimated,
// not measured (timing would synchronise): the GPU's roofline at the problem's FLOPs and bytes.
// A forked child records nothing: its copy of the counts is the parent's, which the parent writes
// (and another thread may have held the lock at the fork).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include <sys/types.h>

#include "GemmShape.hpp"
#include "Warnings.hpp"

namespace gemmtune::dropin {

class CallRecorder {
 public:
  using Estimate = std::function<double(const GemmShape&)>;  // ms of one call
  static constexpr std::chrono::seconds kPeriod{30};

  CallRecorder(std::string path, Estimate estimate, library::Warnings& warnings,
               std::chrono::steady_clock::duration period = kPeriod);

  // One call of `shape` (row-major view); flushes first when the period has passed.
  void count(const GemmShape& shape) noexcept;
  // Appends what was counted since the last flush; a failed write warns once and keeps the counts
  // for the next flush.
  void flush() noexcept;
  const std::string& path() const { return path_; }

 private:
  struct Counted {
    GemmShape shape;
    double msPerCall = 0;
    long long calls = 0;  // since the last flush
  };
  void flushLocked();

  std::string path_;
  Estimate estimate_;
  library::Warnings& warnings_;
  const std::chrono::steady_clock::duration period_;
  std::mutex mutex_;
  std::map<std::string, Counted> counted_;  // by the line's problem text, so the file's order is stable
  std::chrono::steady_clock::time_point lastFlush_;
  const pid_t ownerPid_;  // the process that made it
};

}  // namespace gemmtune::dropin
