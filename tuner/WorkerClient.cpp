#include "WorkerClient.hpp"
#include "ExitCodes.hpp"

#include <signal.h>

#include <algorithm>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>
#include <thread>

#include "ChildProcess.hpp"
#include "worker/WorkerWire.hpp"

namespace gemmtune {

using nlohmann::json;
using Clock = ChildProcess::Clock;

struct WorkerClient::Reply {
  enum class Kind { Ok, Refused, Timeout, Closed, Garbage };
  Kind kind = Kind::Closed;
  json body;
  std::string detail;
  int exitCode = kExitFailure;
};

namespace {

Clock::time_point after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(std::max(seconds, 0.0)));
}

std::vector<std::string> workerArgv(int gpuIndex, std::string selfExe) {
  const char* level = spdlog::get_level() <= spdlog::level::debug ? "-v" : "-q";
  return {std::move(selfExe), level, "worker", "--gpu", std::to_string(gpuIndex)};
}

const char* ioText(wire::FrameIo io) {
  switch (io) {
    case wire::FrameIo::Ok: return "ok";
    case wire::FrameIo::Timeout: return "no reply before the deadline";
    case wire::FrameIo::Closed: return "the worker closed its pipe";
    case wire::FrameIo::Garbage: return "the worker sent a malformed frame";
  }
  return "?";
}

}  // namespace

WorkerClient::WorkerClient(int gpuIndex, std::string selfExe, WorkerOptions options)
    : WorkerClient(workerArgv(gpuIndex, std::move(selfExe)), options) {}

WorkerClient::WorkerClient(std::vector<std::string> argv, WorkerOptions options)
    : argv_(std::move(argv)), options_(options) {
  startWithCanary(false);
}

WorkerClient::~WorkerClient() {
  try {
    stop();
  } catch (...) {
  }
}

pid_t WorkerClient::pid() const { return pid_.load(); }

void WorkerClient::interrupt() {
  interrupted_ = true;
  if (pid_t p = pid_.load(); p > 0) ::kill(-p, SIGKILL);
}

void WorkerClient::stop() {
  if (child_ && child_->running()) {
    auto deadline = Clock::now() + options_.exitGrace;
    if (wire::writeFrame(child_->input(), wire::shutdownRequest(), deadline) == wire::FrameIo::Ok) {
      std::string ignored;
      wire::readFrame(child_->output(), ignored, deadline);
    }
    child_->reap(options_.exitGrace);
  }
  child_.reset();
  pid_ = -1;
}

WorkerClient::Reply WorkerClient::transact(const json& request, double deadlineSec) {
  Reply r;
  if (!child_ || !child_->running()) {
    r.detail = "no worker running";
    return r;
  }
  const auto deadline = after(deadlineSec);
  std::string payload;
  wire::FrameIo io = wire::writeFrame(child_->input(), request, deadline);
  if (io == wire::FrameIo::Ok) io = wire::readFrame(child_->output(), payload, deadline);
  switch (io) {
    case wire::FrameIo::Ok: break;
    case wire::FrameIo::Timeout: r.kind = Reply::Kind::Timeout; r.detail = ioText(io); return r;
    case wire::FrameIo::Closed: r.kind = Reply::Kind::Closed; r.detail = ioText(io); return r;
    case wire::FrameIo::Garbage: r.kind = Reply::Kind::Garbage; r.detail = ioText(io); return r;
  }
  try {
    r.body = wire::decodePayload(payload);
    if (!r.body.at("ok").get<bool>()) {
      r.kind = Reply::Kind::Refused;
      r.detail = r.body.at("error").get<std::string>();
      r.exitCode = r.body.value("exit_code", static_cast<int>(kExitFailure));
      return r;
    }
    r.kind = Reply::Kind::Ok;
  } catch (const std::exception& e) {
    r.kind = Reply::Kind::Garbage;
    r.detail = fmt::format("malformed reply: {}", e.what());
  }
  return r;
}

void WorkerClient::startWithCanary(bool recovering) {
  std::string last;
  for (int attempt = 1; attempt <= std::max(1, options_.canaryAttempts); ++attempt) {
    if (interrupted_) return;
    if (started_) ++restarts_;
    started_ = true;
    child_.reset();
    // UnavailableError: nothing a retry fixes.
    child_ = std::make_unique<ChildProcess>("worker", argv_, ChildProcess::Stdio::Pipes);
    pid_ = child_->pid();

    auto attemptFailed = [&](std::string why) {
      last = std::move(why);
      spdlog::warn("GPU worker start {}/{} failed: {}", attempt, options_.canaryAttempts, last);
      child_->kill();
      std::this_thread::sleep_for(options_.retryPause * attempt);
    };

    std::string payload;
    if (auto io = wire::readFrame(child_->output(), payload, after(options_.startDeadlineSec)); io != wire::FrameIo::Ok) {
      attemptFailed(fmt::format("no hello within {:.1f} s: {} ({})", options_.startDeadlineSec, ioText(io),
                                child_->reap(options_.exitGrace)));
      continue;
    }
    try {
      json hello = wire::decodePayload(payload);
      if (!hello.at("ok").get<bool>()) {
        std::string error = hello.at("error").get<std::string>();
        // A worker that cannot start at all (no driver, no such GPU, no cuBLAS) will not start on
        // a retry either; during recovery the same answer means the GPU went away.
        if (!recovering) {
          child_->reap(options_.exitGrace);
          throwWithExitCode(hello.value("exit_code", static_cast<int>(kExitFailure)), error);
        }
        attemptFailed(error);
        continue;
      }
      info_ = hello.at("hello").get<WorkerInfo>();
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      attemptFailed(fmt::format("malformed hello: {}", e.what()));
      continue;
    }

    Reply canary = transact(wire::canaryRequest(), options_.canaryDeadlineSec);
    std::string canaryStatus;
    if (canary.kind == Reply::Kind::Ok) {
      try {
        CandidateResult r = canary.body.at("result").get<CandidateResult>();
        canaryStatus = r.status == kStatusOk ? "" : r.detail.empty() ? r.status : fmt::format("{}: {}", r.status, r.detail);
      } catch (const std::exception& e) {
        canaryStatus = fmt::format("malformed canary reply: {}", e.what());
      }
    } else {
      canaryStatus = canary.detail;
    }
    if (!canaryStatus.empty()) {
      attemptFailed(fmt::format("canary failed: {}", canaryStatus));
      continue;
    }

    if (problem_) {
      Reply p = transact(wire::problemRequest(*problem_), problemDeadlineSec(*problem_));
      if (p.kind == Reply::Kind::Refused) throwWithExitCode(p.exitCode, p.detail);
      if (p.kind != Reply::Kind::Ok || p.body.value("fatal", false)) {
        attemptFailed(fmt::format("preparing {}x{}x{} failed: {}", problem_->M, problem_->N, problem_->K, p.detail));
        continue;
      }
    }
    return;
  }
  child_.reset();
  pid_ = -1;
  throw GpuUnhealthyError(fmt::format("GPU unhealthy: the worker failed {} consecutive starts with a known-good canary "
                                      "(last: {}); check nvidia-smi and the kernel log before tuning again",
                                      options_.canaryAttempts, last));
}

void WorkerClient::recover(const std::string& why) {
  spdlog::warn("GPU worker replaced after {}", why);
  startWithCanary(true);
}

CandidateResult WorkerClient::resultOf(Reply reply, const std::string& what, double deadlineSec) {
  CandidateResult res;
  switch (reply.kind) {
    case Reply::Kind::Ok:
      try {
        res = reply.body.at("result").get<CandidateResult>();
      } catch (const std::exception& e) {
        child_->kill();
        res.status = kStatusWorkerDied;
        res.detail = fmt::format("malformed reply during {}: {}", what, e.what());
        break;
      }
      if (!reply.body.value("fatal", false)) return res;
      res.detail += fmt::format(" (worker {})", child_->reap(options_.exitGrace));
      break;
    case Reply::Kind::Refused:
      throwWithExitCode(reply.exitCode, fmt::format("worker refused {}: {}", what, reply.detail));
    case Reply::Kind::Timeout:
      child_->kill();
      res.status = kStatusTimeout;
      res.detail = fmt::format("no result within {:.1f} s; worker killed", deadlineSec);
      break;
    case Reply::Kind::Closed:
      res.status = kStatusWorkerDied;
      res.detail = fmt::format("worker {} during {}", child_ ? child_->reap(options_.exitGrace) : "missing", what);
      break;
    case Reply::Kind::Garbage:
      child_->kill();
      res.status = kStatusWorkerDied;
      res.detail = fmt::format("{} during {}", reply.detail, what);
      break;
  }
  if (interrupted_) {
    res.status = kStatusInterrupted;
    return res;
  }
  recover(fmt::format("{} during {}", res.status, what));
  return res;
}

void WorkerClient::setProblem(const Problem& p) {
  if (interrupted_) throw Error("worker interrupted");
  Reply r = transact(wire::problemRequest(p), problemDeadlineSec(p));
  if (r.kind == Reply::Kind::Refused) throwWithExitCode(r.exitCode, r.detail);
  problem_ = p;  // a restart re-prepares it
  if (r.kind == Reply::Kind::Ok && !r.body.value("fatal", false)) return;
  if (child_) child_->kill();
  if (interrupted_) return;
  recover(fmt::format("preparing problem {}: {}", p.shape().str(), r.detail));
}

CandidateResult WorkerClient::run(const CandidateRequest& req, double deadlineSec) {
  if (interrupted_) return CandidateResult{kStatusInterrupted, "interrupted before start"};
  if (!child_ || !child_->running()) recover("a worker that was not running");
  return resultOf(transact(wire::runRequest(req), deadlineSec), req.instance, deadlineSec);
}

CandidateResult WorkerClient::cublas(const TimingPolicy& policy, double deadlineSec, bool verify, const std::string& algo) {
  if (interrupted_) return CandidateResult{kStatusInterrupted, "interrupted before start"};
  if (!child_ || !child_->running()) recover("a worker that was not running");
  return resultOf(transact(wire::cublasRequest(policy, verify, algo), deadlineSec), "cuBLAS timing", deadlineSec);
}

CublasLtPick WorkerClient::cublasLt(const TimingPolicy& policy, double deadlineSec) {
  CublasLtPick pick;
  if (interrupted_) {
    pick.result = CandidateResult{kStatusInterrupted, "interrupted before start"};
    return pick;
  }
  if (!child_ || !child_->running()) recover("a worker that was not running");
  Reply reply = transact(wire::cublasLtRequest(policy), deadlineSec);
  const nlohmann::json body = reply.kind == Reply::Kind::Ok ? reply.body : nlohmann::json::object();
  pick.result = resultOf(std::move(reply), "cuBLASLt's search", deadlineSec);
  // A worker that answers without a configuration (an older one, a simulated one) found none.
  pick.algo = pick.result.status == kStatusOk ? body.value("algo", std::string()) : std::string();
  pick.listed = body.value("listed", 0);
  pick.screened = body.value("screened", 0);
  return pick;
}

double WorkerClient::expectedSeconds(const TimingPolicy& p, double kernelMs) {
  const double t = std::max(kernelMs, 0.0);
  constexpr double kCheckMs = 5;  // fill, checker and copies per verification check
  const double verifyMs = 9 * (t + kCheckMs);  // three checks in each of up to three layouts
  const double warmupMs = 2 * std::max(p.warmupMs, 0.0) + t;  // doubling batches overshoot < 2x
  const double timedMs = std::max(std::min(p.maxReps * t, p.budgetMs + t), p.minReps * t);
  return (verifyMs + warmupMs + timedMs) / 1000;
}

double WorkerClient::deadlineFor(const TimingPolicy& p, double kernelMs, double floorSec, double factor) {
  return floorSec + factor * expectedSeconds(p, kernelMs);
}

double WorkerClient::problemDeadlineSec(const Problem& p) {
  // Four pedantic cuBLAS SGEMMs (every batch) at a pessimistic 1 TFLOP/s, plus allocation and fills.
  const double flops = p.shape().flops();
  return 30 + 2 * 4 * flops / 1e12;
}

}  // namespace gemmtune
