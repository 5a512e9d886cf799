// WorkerClient: the parent's handle on one GPU's worker process (`gemmtune worker --gpu N`).
// The parent never creates a CUDA context: it sends requests over pipes, bounds each one by a
// wall-clock deadline, and when the worker faults, hangs or dies it kills the worker's whole
// process group, starts a fresh worker, proves the GPU healthy with a known-good canary and
// re-prepares the problem — only then does it return the failed candidate's status. A GPU that
// keeps failing the canary stops the run (GpuUnhealthyError, exit 75) instead of blaming
// candidates.
//
// Not thread-safe, except interrupt(). Start it from a thread that lives as long as the run: the
// worker gets PR_SET_PDEATHSIG, which fires when the starting thread ends.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "WorkerProtocol.hpp"
#include "gemmtune/Errors.hpp"

namespace gemmtune {

class ChildProcess;

struct WorkerOptions {
  double startDeadlineSec = 60;   // exec to hello: driver init, context, cuBLAS, helper kernels
  double canaryDeadlineSec = 30;
  int canaryAttempts = 3;         // consecutive failed starts before GpuUnhealthyError
  std::chrono::milliseconds retryPause{500};  // grows linearly with the attempt
  std::chrono::milliseconds exitGrace{2000};  // for a worker to exit on its own before SIGKILL
};

class WorkerClient {
 public:
  // Starts `selfExe -q|-v worker --gpu N` (selfExe: normally "/proc/self/exe"), waits for its hello
  // and runs the canary. Throws NoGpuError (69), UsageError (2, no such GPU), UnavailableError
  // (69: cuBLAS missing, binary not executable) or GpuUnhealthyError (75).
  WorkerClient(int gpuIndex, std::string selfExe, WorkerOptions options = {});
  // Any command speaking the worker protocol (tests use fake workers).
  explicit WorkerClient(std::vector<std::string> argv, WorkerOptions options = {});
  ~WorkerClient();  // asks the worker to shut down, kills it after exitGrace; never throws
  WorkerClient(const WorkerClient&) = delete;
  WorkerClient& operator=(const WorkerClient&) = delete;

  const WorkerInfo& info() const { return info_; }

  // Prepares buffers and references; kept and re-sent after every restart. Throws UsageError
  // when the problem does not fit in GPU memory, GpuUnhealthyError when the worker cannot be
  // brought back. Deadline: problemDeadlineSec(p).
  void setProblem(const Problem& p);

  // Loads, verifies and times one candidate. Always returns a result whose status is one of
  // "ok", "launch_error", "wrong_result" (worker kept), "runtime_fault:<CUDA_ERROR_NAME>",
  // "timeout", "worker_died" (worker replaced and canary passed before returning), or
  // "interrupted" after interrupt(). Throws GpuUnhealthyError, or Error when the worker refuses
  // the request itself (no problem set: a caller bug).
  CandidateResult run(const CandidateRequest& req, double deadlineSec);
  // cuBLAS SGEMM (default math, no TF32) on the current problem, timed under the same policy;
  // with `verify`, first checked as a candidate is ("wrong_result" then, with its timing).
  // With `algo` (a CublasLtAlgo name), that cuBLASLt configuration instead of cuBLAS's own call.
  CandidateResult cublas(const TimingPolicy& policy, double deadlineSec, bool verify = false, const std::string& algo = "");
  // cuBLASLt's configurations searched on the current problem (the worker's searchCublasLt): the
  // fastest verified one, or an empty `algo` with the reason in `result`.
  CublasLtPick cublasLt(const TimingPolicy& policy, double deadlineSec);

  // Workers started after the first one (each fault, hang or death costs at least one).
  int restarts() const { return restarts_; }
  pid_t pid() const;  // the current worker (and its process group); -1 when none

  // From any thread or a signal handler: kills the worker now; the request in flight (and any
  // later one) returns "interrupted" without a restart.
  void interrupt();

  // How long a run request takes for a kernel of `kernelMs` per launch under `policy`: up to nine
  // verification launches (three checks in up to three layouts), the warm-up, the timed repetitions.
  static double expectedSeconds(const TimingPolicy& policy, double kernelMs);
  // A deadline for run(): floorSec + factor × expectedSeconds. Pass a pessimistic kernelMs (e.g.
  // the FLOPs at a fraction of the slowest plausible rate); the floor covers load and checks.
  static double deadlineFor(const TimingPolicy& policy, double kernelMs, double floorSec = 10, double factor = 3);
  // Preparing a problem: allocation, input generation and four pedantic cuBLAS references.
  static double problemDeadlineSec(const Problem& p);

 private:
  struct Reply;
  void startWithCanary(bool recovering);
  void recover(const std::string& why);
  Reply transact(const nlohmann::json& request, double deadlineSec);
  CandidateResult resultOf(Reply reply, const std::string& what, double deadlineSec);
  void stop();

  std::vector<std::string> argv_;
  WorkerOptions options_;
  std::unique_ptr<ChildProcess> child_;
  std::atomic<pid_t> pid_{-1};
  std::atomic<bool> interrupted_{false};
  WorkerInfo info_;
  std::optional<Problem> problem_;
  int restarts_ = 0;
  bool started_ = false;
};

}  // namespace gemmtune
