// WorkerProtocol: what the tuner (parent) asks the GPU worker process to do, and what comes back.
// The parent never creates a CUDA context; every CUDA call happens in the worker, which the
// parent kills and restarts after a fault, crash or timeout.
#pragma once

#include <string>

#include "Family.hpp"

namespace gemmtune {

// One problem the worker prepares buffers for (A, B, C with random data; reused across
// candidates until the next Problem).
struct Problem {
  long long M = 0, N = 0, K = 0;
};

struct TimingPolicy {
  double warmupMs = 100;        // time-based warm-up before the first timed launch
  double budgetMs = 300;        // stop adding repetitions after this much timed GPU time
  int minReps = 5;
  int maxReps = 200;
  double spreadTarget = 0.02;   // stop once (p75 - p25) / median is below this
  // Early stop: after `minReps`, a candidate whose median is slower than this many times the
  // best median so far stops and is marked partial.
  double earlyStopRatio = 1.5;
  double bestSoFarMs = 0;       // 0: no best yet
};

// One candidate to load, verify and time.
struct CandidateRequest {
  std::string instance;         // canonical name (for logs)
  std::string cubin;            // ELF bytes from NVRTC
  std::string loweredName;      // entry point in the cubin
  Dim3 grid, block;
  int dynamicSmemBytes = 0;
  bool verify = true;
  bool time = true;
  TimingPolicy timing;
};

struct CandidateResult {
  // "ok", "launch_error", "runtime_fault:<CUDA_ERROR_NAME>", "timeout", "worker_died",
  // "wrong_result". Only "ok" can become best.
  std::string status;
  std::string detail;           // human-readable reason (error text, max error, ...)
  double medianMs = 0, minMs = 0, spread = 0;
  int reps = 0;
  bool partial = false;         // stopped early: clearly slower than the best so far
  double maxError = 0;          // max normalised error of the random-normal check
  int smClockMHz = 0;           // SM clock read after timing (0 when unknown)
};

}  // namespace gemmtune
