// DropinState: the cuBLAS drop-in's process-wide state — policy, the gemmtune Library that serves,
// the record-mode recorder, what it did — made at the first intercepted call and never destroyed
// (a host program's exit may run after its CUDA contexts are gone: nothing is torn down then).
// At exit it appends the record file and prints one line of what it served to stderr
// (GEMMTUNE_CUBLAS_REPORT=0 silences it).
#pragma once

#include <atomic>
#include <memory>

#include <sys/types.h>

#include "CallRecorder.hpp"
#include "DropinPolicy.hpp"
#include "Warnings.hpp"
#include "gemmtune/Library.hpp"

namespace gemmtune::dropin {

class DropinState {
 public:
  Policy policy() const { return policy_; }
  PrecisionClass precision() const { return precision_; }  // $GEMMTUNE_PRECISION
  library::Warnings& warnings() { return warnings_; }
  Library* library() { return library_.get(); }        // null when the policy is off, or it could not be made
  CallRecorder* recorder() { return recorder_.get(); }  // null unless $GEMMTUNE_RECORD names a file

  // What became of the well-formed FP32 calls (relaxed counters; the exit line reads them).
  struct Counts {
    std::atomic<long long> calls{0}, served{0};
    std::atomic<long long> leftToCublas{0};  // by the handle or call: TF32 math, device scalars, alpha 0, ...
    std::atomic<long long> declined{0};      // no measured win (policy measured), or first seen in a graph capture
    std::atomic<long long> failed{0};        // the library could not run it (no GPU, an invalid argument, ...)
  } counts;

  // The exit line: "gemmtune drop-in (GEMMTUNE_CUBLAS=measured): N FP32 GEMM calls, S served ...".
  std::string summary() const;
  bool inOwnerProcess() const;

 private:
  DropinState();
  friend DropinState& state();

  Policy policy_ = Policy::measured;
  PrecisionClass precision_ = PrecisionClass::strict;
  const pid_t ownerPid_;  // a forked child prints no summary of the parent's calls
  library::Warnings warnings_;
  std::unique_ptr<Library> library_;
  std::unique_ptr<CallRecorder> recorder_;
};

// The process's state, made on first use (thread-safe).
DropinState& state();

}  // namespace gemmtune::dropin
