#include "WorkerMain.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <memory>
#include <optional>
#include <spdlog/spdlog.h>

#include "CandidateKernel.hpp"
#include "Cublas.hpp"
#include "WorkerServer.hpp"
#include "WorkerWire.hpp"
#include "ExitCodes.hpp"

namespace gemmtune {

namespace {

// One reply, however long the parent takes to read it. A write that fails means the parent is
// gone: nobody to answer.
void reply(int out, const nlohmann::json& message) {
  if (wire::writeFrame(out, message, PipeClock::time_point::max()) != wire::FrameIo::Ok) std::_Exit(kWorkerExitFatal);
}

// Blocks for the next request; nullopt at end of input, or when the parent sends garbage (not
// one to serve).
std::optional<std::string> nextRequest(int in) {
  std::string payload;
  if (wire::readFrame(in, payload, PipeClock::time_point::max()) != wire::FrameIo::Ok) return std::nullopt;
  return payload;
}

// The protocol owns the original stdin/stdout; library chatter on stdout goes to stderr instead.
std::pair<int, int> takeProtocolFds() {
  int in = ::fcntl(0, F_DUPFD_CLOEXEC, 3), out = ::fcntl(1, F_DUPFD_CLOEXEC, 3);
  if (in < 0 || out < 0) throw IoError(fmt::format("worker cannot duplicate its pipes: {}", std::strerror(errno)));
  ::dup2(2, 1);
  if (int devNull = ::open("/dev/null", O_RDONLY | O_CLOEXEC); devNull >= 0) {
    ::dup2(devNull, 0);
    ::close(devNull);
  }
  return {in, out};
}

[[noreturn]] void replyFatal(int out, const WorkerServer& server, CUresult code, const std::string& what) {
  const char* name = nullptr;
  server.gpu().cu().cuGetErrorName(code, &name);
  CandidateResult r;
  r.status = std::string(kStatusRuntimeFaultPrefix) + (name ? name : fmt::format("CUresult_{}", static_cast<int>(code)));
  r.detail = what;
  spdlog::debug("fatal: {}", what);
  reply(out, wire::resultReply(r, true));
  std::_Exit(kWorkerExitFatal);  // destructors would only touch the poisoned context
}

// One request -> one reply. Returns false after "shutdown".
bool serve(const nlohmann::json& req, WorkerServer& server, int out) {
  const std::string op = req.at("op").get<std::string>();
  spdlog::debug("request {}", op);
  if (op == "shutdown") {
    reply(out, wire::okReply());
    return false;
  }
  try {
    nlohmann::json answer;
    if (op == "problem") {
      server.setProblem(req.at("problem").get<Problem>());
      answer = wire::okReply();
    } else if (op == "run") {
      answer = wire::resultReply(server.runCandidate(req.at("candidate").get<CandidateRequest>()), false);
    } else if (op == "cublas") {
      const std::string name = req.value("algo", std::string());
      const std::optional<CublasLtAlgo> algo = CublasLtAlgo::parse(name);
      if (!name.empty() && !algo) throw UsageError(fmt::format("'{}' is not a cuBLASLt configuration name", name));
      answer = wire::resultReply(
          server.runCublas(req.at("timing").get<TimingPolicy>(), req.value("verify", false), algo ? &*algo : nullptr),
          false);
    } else if (op == "cublaslt") {
      answer = wire::cublasLtReply(server.searchCublasLt(req.at("timing").get<TimingPolicy>()));
    } else if (op == "canary") {
      answer = wire::resultReply(server.canary(), false);
    } else {
      answer = wire::errorReply(fmt::format("unknown worker request '{}'", op), kExitUsage);
    }
    reply(out, answer);
  } catch (const CudaError& e) {
    // Any CUDA failure while a candidate or cuBLAS ran: restart rather than trust the context.
    // Elsewhere (preparing a problem) only a context that reports a sticky error is fatal.
    CUresult health = server.gpu().health();
    if (op != "problem" || health != CUDA_SUCCESS) replyFatal(out, server, e.result, e.what());
    reply(out, wire::errorReply(e.what(), kExitFailure));
  } catch (const CublasError& e) {
    if (CUresult health = server.gpu().health(); health != CUDA_SUCCESS) replyFatal(out, server, health, e.what());
    reply(out, wire::errorReply(e.what(), kExitFailure));
  } catch (const Error& e) {
    reply(out, wire::errorReply(e.what(), exitCodeOf(e)));
  } catch (const std::exception& e) {
    if (CUresult health = server.gpu().health(); health != CUDA_SUCCESS) replyFatal(out, server, health, e.what());
    reply(out, wire::errorReply(e.what(), kExitFailure));
  }
  return true;
}

}  // namespace

int runWorker(int gpuIndex) {
  spdlog::default_logger()->set_pattern(fmt::format("gemmtune worker {}: %^%l%$: %v", gpuIndex));
  ::signal(SIGPIPE, SIG_IGN);  // a vanished parent shows up as EPIPE, handled in reply()
  auto [in, out] = takeProtocolFds();

  std::unique_ptr<WorkerServer> server;
  try {
    server = std::make_unique<WorkerServer>(gpuIndex);
  } catch (const Error& e) {
    reply(out, wire::errorReply(e.what(), exitCodeOf(e)));
    return exitCodeOf(e);
  } catch (const std::exception& e) {
    reply(out, wire::errorReply(fmt::format("worker cannot start on GPU {}: {}", gpuIndex, e.what()), kExitUnavailable));
    return kExitUnavailable;
  }
  reply(out, wire::helloReply(server->info()));
  spdlog::debug("worker ready on GPU {} ({}, {})", gpuIndex, server->info().name, server->info().arch);

  while (auto payload = nextRequest(in)) {
    nlohmann::json req;
    try {
      req = wire::decodePayload(*payload);
      if (!req.contains("op")) throw std::runtime_error("malformed request: no op");
    } catch (const std::exception& e) {
      reply(out, wire::errorReply(e.what(), kExitFailure));
      continue;
    }
    if (!serve(req, *server, out)) break;
  }
  return 0;
}

}  // namespace gemmtune
