// WorkerProtocol: what the tuner (parent) asks the GPU worker process to do, and what comes back.
// The parent never creates a CUDA context; every CUDA call happens in the worker, which the
// parent kills and restarts after a fault, crash or timeout. Plain data only: the wire encoding
// lives in WorkerWire, the process handling in WorkerClient.
#pragma once

#include <cstdint>
#include <string>

#include <vector>

#include "LaunchPlan.hpp"

namespace gemmtune {

// One problem the worker prepares buffers for (A, B, C with random data, the cuBLAS references
// of both verification sets, rotation copies; reused across candidates until the next Problem).
struct Problem {
  long long M = 0, N = 0, K = 0;
  // Timing runs with alpha = 1 and this beta (the problem's beta class); verification always
  // checks beta = 0 and beta = 2.
  double beta = 0;
  // How A and B are stored (timing and every check) and how many products one launch computes:
  // timing launches GemmProblem::packed(shape()); the checks add padded strides and pointer arrays.
  Layout layout{};
  long long batch = 1;

  GemmShape shape() const { return {M, N, K, layout, batch}; }
  static Problem of(const GemmShape& s, double beta = 0) { return {s.M, s.N, s.K, beta, s.layout, s.batch}; }
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

// One memory layout a verification check launches in (ProblemLayout::checkProblems: packed,
// padded or, batched, pointer arrays; beta zero or not) and the candidate's plan for it. The worker has no family registry,
// so the parent plans every layout; a refused plan skips the checks of that layout.
struct CheckLayout {
  GemmProblem problem;
  LaunchPlan plan;
};

// One candidate to load, verify and time.
struct CandidateRequest {
  std::string instance;         // canonical name (for logs)
  std::string cubin;            // ELF bytes from NVRTC
  std::vector<std::string> loweredNames;  // entry points in the cubin: kernel i of the plan
  LaunchPlan plan;              // timing: the problem as the worker lays it out (GemmProblem::packed)
  std::vector<CheckLayout> checkLayouts;  // verification: one per ProblemLayout::checkProblems entry
  bool verify = true;
  // With verify: the faithful checks too (worker/FaithfulCheck: error against FP64 no larger than
  // cuBLAS SGEMM's on three data sets, NaN and Inf as cuBLAS SGEMM's), for tensor-core families.
  bool faithful = false;
  bool time = true;
  TimingPolicy timing;
};

// Status strings, exactly as stored. Only kStatusOk can become best.
inline constexpr const char* kStatusOk = "ok";
// An ok row's reason once the tuner re-timed it with its size's finalists (rounds interleaved with
// cuBLAS): "ok:retimed". A later run that resumes the row does not re-time it again.
inline constexpr const char* kReasonRetimed = "retimed";
inline constexpr const char* kStatusLaunchError = "launch_error";        // not launchable; worker kept
inline constexpr const char* kStatusRuntimeFaultPrefix = "runtime_fault:";  // + CUDA_ERROR_NAME
inline constexpr const char* kStatusTimeout = "timeout";
inline constexpr const char* kStatusWorkerDied = "worker_died";
inline constexpr const char* kStatusWrongResult = "wrong_result";
// Not a measurement: WorkerClient::interrupt() abandoned the request. Never store it.
inline constexpr const char* kStatusInterrupted = "interrupted";

struct CandidateResult {
  // "ok", "launch_error", "runtime_fault:<CUDA_ERROR_NAME>", "timeout", "worker_died",
  // "wrong_result" (or "interrupted", never stored). Only "ok" can become best.
  std::string status;
  std::string detail;           // human-readable reason (error text, max error, ...)
  double medianMs = 0, minMs = 0, spread = 0;
  int reps = 0;
  bool partial = false;         // stopped early: clearly slower than the best so far
  // Largest |C - C_ref| / tolerance over the checks run, tolerance = 4·sqrt(K)·2^-24·|alpha|·(|A||B|)ij
  // (<= 1 passes the random-normal check; the small-integer check needs 0). +inf when an element
  // was NaN or Inf.
  double maxError = 0;
  int smClockMHz = 0;           // SM clock read after timing (0 when unknown)
};

// cuBLASLt's configurations searched on the current problem: `algo` (a CublasLtAlgo name) is the
// fastest of the few best screened that passed verification, `result` its verified timing; empty
// `algo` when none did (then `result` says why).
struct CublasLtPick {
  // The search's cost (the worker's WorkerServer::searchCublasLt): each listed configuration timed
  // twice until kScreenMs of GPU time is spent, then the fastest kFinalists (distinct but for the
  // custom option) verified and timed.
  static constexpr double kScreenMs = 500;
  static constexpr std::size_t kFinalists = 3;

  CandidateResult result;
  std::string algo;
  int listed = 0, screened = 0;
};

// What the worker found when it started (sent once, before any request).
struct WorkerInfo {
  int gpuIndex = 0;
  std::string name;             // "NVIDIA H100 80GB HBM3"
  std::string arch;             // "sm_90": the target cubins must be compiled for
  std::string pciBusId;         // "0000:65:00.0"
  int smCount = 0;
  long long l2Bytes = 0;
  long long totalMemBytes = 0;
  long long freeMemBytes = 0;   // at start, before any problem buffers
  int driverVersion = 0;        // 13000
  int cublasVersion = 0;        // 130000 style, as cublasGetVersion reports
  int maxClockMHz = 0;          // CU_DEVICE_ATTRIBUTE_CLOCK_RATE (the boost maximum)
};

}  // namespace gemmtune
