// WorkerWire: how WorkerProtocol messages travel over the worker's pipes.
//
// A frame is a 4-byte little-endian payload length followed by the payload, one CBOR-encoded
// JSON object (cubins as CBOR byte strings). Requests:
//   {"op": "problem", "problem": {Problem}}     allocate, fill, compute references
//   {"op": "run", "candidate": {CandidateRequest}}
//   {"op": "cublas", "timing": {TimingPolicy}, "verify": bool}  time cuBLAS on the current problem
//                                               (verified first like a candidate when "verify")
//   {"op": "canary"}                            built-in kernel vs cuBLAS, tiny size
//   {"op": "shutdown"}
// Every request gets exactly one reply:
//   {"ok": true, "result": {...}, "fatal": false}   ("problem" and "shutdown" carry no result)
//   {"ok": false, "error": "one line", "exit_code": 2}  request refused, worker still usable
// "fatal": true means the worker's CUDA context is poisoned and it exits right after the reply.
// Before the first request the worker sends a hello: {"ok": true, "hello": {WorkerInfo}} or
// {"ok": false, "error": ..., "exit_code": ...} and exits.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "PipeIo.hpp"
#include "WorkerProtocol.hpp"

namespace gemmtune {

void to_json(nlohmann::json& j, const Dim3& d);
void from_json(const nlohmann::json& j, Dim3& d);
void to_json(nlohmann::json& j, const KernelLaunch& l);
void from_json(const nlohmann::json& j, KernelLaunch& l);
void to_json(nlohmann::json& j, const LaunchPlan& p);
void from_json(const nlohmann::json& j, LaunchPlan& p);
void to_json(nlohmann::json& j, const GemmProblem& p);
void from_json(const nlohmann::json& j, GemmProblem& p);
void to_json(nlohmann::json& j, const CheckLayout& l);
void from_json(const nlohmann::json& j, CheckLayout& l);
void to_json(nlohmann::json& j, const Layout& l);  // "nn", "nt", "tn" or "tt"
void from_json(const nlohmann::json& j, Layout& l);
void to_json(nlohmann::json& j, const Problem& p);
void from_json(const nlohmann::json& j, Problem& p);
void to_json(nlohmann::json& j, const TimingPolicy& p);
void from_json(const nlohmann::json& j, TimingPolicy& p);
void to_json(nlohmann::json& j, const CandidateRequest& r);
void from_json(const nlohmann::json& j, CandidateRequest& r);
void to_json(nlohmann::json& j, const CandidateResult& r);
void from_json(const nlohmann::json& j, CandidateResult& r);
void to_json(nlohmann::json& j, const WorkerInfo& i);
void from_json(const nlohmann::json& j, WorkerInfo& i);

namespace wire {

inline constexpr std::size_t kHeaderBytes = 4;
// Larger frames are treated as garbage: no request or reply comes near this.
inline constexpr std::uint32_t kMaxFrameBytes = 256u << 20;

// Header + CBOR payload, ready to write.
std::string encodeFrame(const nlohmann::json& message);
// The payload length announced by a header; nullopt when above kMaxFrameBytes.
std::optional<std::uint32_t> payloadLength(const unsigned char header[kHeaderBytes]);
// Throws std::runtime_error("malformed ...") on anything but one CBOR object.
nlohmann::json decodePayload(std::string_view payload);

// Frames over the pipes, both sides: the parent bounds each by a deadline (its end of the write
// pipe is O_NONBLOCK), the worker waits as long as it takes (PipeClock::time_point::max()).
enum class FrameIo {
  Ok,
  Timeout,  // the deadline passed first
  Closed,   // the other side is gone
  Garbage   // the header announced more than kMaxFrameBytes
};
FrameIo writeFrame(int fd, const nlohmann::json& message, PipeClock::time_point deadline);
FrameIo readFrame(int fd, std::string& payload, PipeClock::time_point deadline);

// Request builders (parent side).
nlohmann::json problemRequest(const Problem& p);
nlohmann::json runRequest(const CandidateRequest& r);
// `algo`: a cuBLASLt configuration's name (CublasLtAlgo) to run instead of cuBLAS's own call.
nlohmann::json cublasRequest(const TimingPolicy& p, bool verify = false, const std::string& algo = "");
// cuBLASLt's configurations searched on the current problem (WorkerServer::searchCublasLt).
nlohmann::json cublasLtRequest(const TimingPolicy& p);
nlohmann::json canaryRequest();
nlohmann::json shutdownRequest();

// Reply builders (worker side).
nlohmann::json okReply();
nlohmann::json resultReply(const CandidateResult& r, bool fatal);
nlohmann::json cublasLtReply(const CublasLtPick& pick);
nlohmann::json errorReply(const std::string& message, int exitCode);
nlohmann::json helloReply(const WorkerInfo& info);

}  // namespace wire
}  // namespace gemmtune
