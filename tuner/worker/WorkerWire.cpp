#include "WorkerWire.hpp"

#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <vector>

namespace gemmtune {

using nlohmann::json;

namespace {
// CBOR carries IEEE doubles, so +inf survives; text JSON would not, but frames are never text.
double number(const json& j, const char* key, double fallback) {
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? fallback : it->get<double>();
}
}  // namespace

void to_json(json& j, const Dim3& d) { j = json::array({d.x, d.y, d.z}); }
void from_json(const json& j, Dim3& d) {
  if (!j.is_array() || j.size() != 3) throw std::runtime_error("malformed dim3: want [x, y, z]");
  d = {j[0].get<unsigned>(), j[1].get<unsigned>(), j[2].get<unsigned>()};
}

void to_json(json& j, const Problem& p) {
  j = {{"M", p.M}, {"N", p.N}, {"K", p.K}, {"beta", p.beta}, {"layout", p.layout}, {"batch", p.batch}};
}
void from_json(const json& j, Problem& p) {
  p.M = j.at("M").get<long long>();
  p.N = j.at("N").get<long long>();
  p.K = j.at("K").get<long long>();
  p.beta = number(j, "beta", 0);
  p.layout = j.at("layout").get<Layout>();
  p.batch = j.at("batch").get<long long>();
}

void to_json(json& j, const Layout& l) { j = l.text(); }
void from_json(const json& j, Layout& l) {
  std::optional<Layout> parsed = j.is_string() ? Layout::parse(j.get<std::string>()) : std::nullopt;
  if (!parsed) throw std::runtime_error("malformed layout: want \"nn\", \"nt\", \"tn\" or \"tt\"");
  l = *parsed;
}

void to_json(json& j, const TimingPolicy& p) {
  j = {{"warmup_ms", p.warmupMs},       {"budget_ms", p.budgetMs},
       {"min_reps", p.minReps},         {"max_reps", p.maxReps},
       {"spread_target", p.spreadTarget}, {"early_stop_ratio", p.earlyStopRatio},
       {"best_so_far_ms", p.bestSoFarMs}};
}
void from_json(const json& j, TimingPolicy& p) {
  p.warmupMs = j.at("warmup_ms").get<double>();
  p.budgetMs = j.at("budget_ms").get<double>();
  p.minReps = j.at("min_reps").get<int>();
  p.maxReps = j.at("max_reps").get<int>();
  p.spreadTarget = j.at("spread_target").get<double>();
  p.earlyStopRatio = j.at("early_stop_ratio").get<double>();
  p.bestSoFarMs = j.at("best_so_far_ms").get<double>();
}

void to_json(json& j, const KernelLaunch& l) {
  std::vector<int> args;
  for (KernelArg a : l.args) args.push_back(static_cast<int>(a));
  j = {{"kernel", l.kernel}, {"grid", l.grid}, {"block", l.block}, {"dynamic_smem_bytes", l.dynamicSmemBytes}, {"args", args},
       {"one_wave", l.oneWave}};
}
void from_json(const json& j, KernelLaunch& l) {
  l.kernel = j.at("kernel").get<int>();
  l.grid = j.at("grid").get<Dim3>();
  l.block = j.at("block").get<Dim3>();
  l.dynamicSmemBytes = j.at("dynamic_smem_bytes").get<int>();
  l.oneWave = j.value("one_wave", false);  // absent from a peer that predates one-wave launches
  l.args.clear();
  for (int a : j.at("args").get<std::vector<int>>()) {
    if (a < 0 || a > static_cast<int>(KernelArg::Workspace)) throw std::runtime_error("malformed request: unknown kernel argument");
    l.args.push_back(static_cast<KernelArg>(a));
  }
}
void to_json(json& j, const LaunchPlan& p) {
  j = {{"refusal", p.refusal}, {"launches", p.launches}, {"workspace_bytes", p.workspaceBytes}};
}
void from_json(const json& j, LaunchPlan& p) {
  p.refusal = j.at("refusal").get<std::string>();
  p.launches = j.at("launches").get<std::vector<KernelLaunch>>();
  p.workspaceBytes = j.at("workspace_bytes").get<long long>();
}

void to_json(json& j, const GemmProblem& p) {
  j = {{"m", p.m},
       {"n", p.n},
       {"k", p.k},
       {"layout", p.layout},
       {"lda", p.lda},
       {"ldb", p.ldb},
       {"ldc", p.ldc},
       {"batch", p.batch},
       {"strides", json::array({p.strideA, p.strideB, p.strideC})},
       {"pointer_arrays", p.pointerArrays},
       {"align_a", p.alignA},
       {"align_b", p.alignB},
       {"align_c", p.alignC},
       {"beta_zero", p.betaZero}};
}
void from_json(const json& j, GemmProblem& p) {
  p.m = j.at("m").get<long long>();
  p.n = j.at("n").get<long long>();
  p.k = j.at("k").get<long long>();
  p.layout = j.at("layout").get<Layout>();
  p.lda = j.at("lda").get<long long>();
  p.ldb = j.at("ldb").get<long long>();
  p.ldc = j.at("ldc").get<long long>();
  p.batch = j.at("batch").get<long long>();
  const auto strides = j.at("strides").get<std::vector<long long>>();
  if (strides.size() != 3) throw std::runtime_error("malformed problem: want strides [A, B, C]");
  p.strideA = strides[0], p.strideB = strides[1], p.strideC = strides[2];
  p.pointerArrays = j.at("pointer_arrays").get<bool>();
  p.alignA = j.at("align_a").get<int>();
  p.alignB = j.at("align_b").get<int>();
  p.alignC = j.at("align_c").get<int>();
  p.betaZero = j.at("beta_zero").get<bool>();
}
void to_json(json& j, const CheckLayout& l) { j = {{"problem", l.problem}, {"plan", l.plan}}; }
void from_json(const json& j, CheckLayout& l) {
  l.problem = j.at("problem").get<GemmProblem>();
  l.plan = j.at("plan").get<LaunchPlan>();
}

void to_json(json& j, const CandidateRequest& r) {
  j = {{"instance", r.instance},
       {"cubin", json::binary(std::vector<std::uint8_t>(r.cubin.begin(), r.cubin.end()))},
       {"lowered_names", r.loweredNames},
       {"plan", r.plan},
       {"check_layouts", r.checkLayouts},
       {"verify", r.verify},
       {"faithful", r.faithful},
       {"time", r.time},
       {"timing", r.timing}};
}
void from_json(const json& j, CandidateRequest& r) {
  r.instance = j.at("instance").get<std::string>();
  const auto& bin = j.at("cubin");
  if (!bin.is_binary()) throw std::runtime_error("malformed request: cubin is not a byte string");
  r.cubin.assign(bin.get_binary().begin(), bin.get_binary().end());
  r.loweredNames = j.at("lowered_names").get<std::vector<std::string>>();
  r.plan = j.at("plan").get<LaunchPlan>();
  r.checkLayouts = j.at("check_layouts").get<std::vector<CheckLayout>>();
  r.verify = j.at("verify").get<bool>();
  r.faithful = j.at("faithful").get<bool>();
  r.time = j.at("time").get<bool>();
  r.timing = j.at("timing").get<TimingPolicy>();
}

void to_json(json& j, const CandidateResult& r) {
  j = {{"status", r.status},   {"detail", r.detail},   {"median_ms", r.medianMs},
       {"min_ms", r.minMs},    {"spread", r.spread},   {"reps", r.reps},
       {"partial", r.partial}, {"max_error", r.maxError}, {"sm_clock_mhz", r.smClockMHz}};
}
void from_json(const json& j, CandidateResult& r) {
  r.status = j.at("status").get<std::string>();
  r.detail = j.at("detail").get<std::string>();
  r.medianMs = j.at("median_ms").get<double>();
  r.minMs = j.at("min_ms").get<double>();
  r.spread = j.at("spread").get<double>();
  r.reps = j.at("reps").get<int>();
  r.partial = j.at("partial").get<bool>();
  r.maxError = number(j, "max_error", std::numeric_limits<double>::infinity());
  r.smClockMHz = j.at("sm_clock_mhz").get<int>();
}

void to_json(json& j, const WorkerInfo& i) {
  j = {{"gpu_index", i.gpuIndex},     {"name", i.name},
       {"arch", i.arch},              {"pci_bus_id", i.pciBusId},
       {"sm_count", i.smCount},       {"l2_bytes", i.l2Bytes},
       {"total_mem_bytes", i.totalMemBytes}, {"free_mem_bytes", i.freeMemBytes},
       {"driver_version", i.driverVersion},  {"cublas_version", i.cublasVersion},
       {"max_clock_mhz", i.maxClockMHz}};
}
void from_json(const json& j, WorkerInfo& i) {
  i.gpuIndex = j.at("gpu_index").get<int>();
  i.name = j.at("name").get<std::string>();
  i.arch = j.at("arch").get<std::string>();
  i.pciBusId = j.at("pci_bus_id").get<std::string>();
  i.smCount = j.at("sm_count").get<int>();
  i.l2Bytes = j.at("l2_bytes").get<long long>();
  i.totalMemBytes = j.at("total_mem_bytes").get<long long>();
  i.freeMemBytes = j.at("free_mem_bytes").get<long long>();
  i.driverVersion = j.at("driver_version").get<int>();
  i.cublasVersion = j.at("cublas_version").get<int>();
  i.maxClockMHz = j.at("max_clock_mhz").get<int>();
}

namespace wire {

std::string encodeFrame(const json& message) {
  std::vector<std::uint8_t> payload = json::to_cbor(message);
  if (payload.size() > kMaxFrameBytes) throw std::runtime_error("message too large for one worker frame");
  const auto n = static_cast<std::uint32_t>(payload.size());
  std::string frame(kHeaderBytes + payload.size(), '\0');
  for (std::size_t b = 0; b < kHeaderBytes; ++b) frame[b] = static_cast<char>((n >> (8 * b)) & 0xffu);
  std::copy(payload.begin(), payload.end(), frame.begin() + kHeaderBytes);
  return frame;
}

std::optional<std::uint32_t> payloadLength(const unsigned char header[kHeaderBytes]) {
  std::uint32_t n = 0;
  for (std::size_t b = 0; b < kHeaderBytes; ++b) n |= static_cast<std::uint32_t>(header[b]) << (8 * b);
  if (n > kMaxFrameBytes) return std::nullopt;
  return n;
}

json decodePayload(std::string_view payload) {
  json j = json::from_cbor(payload.begin(), payload.end(), true, false);
  if (j.is_discarded()) throw std::runtime_error("malformed worker frame: not CBOR");
  if (!j.is_object()) throw std::runtime_error("malformed worker frame: not an object");
  return j;
}

namespace {
FrameIo frameIo(PipeIo io) {
  switch (io) {
    case PipeIo::Ok: return FrameIo::Ok;
    case PipeIo::Timeout: return FrameIo::Timeout;
    case PipeIo::Closed: return FrameIo::Closed;
  }
  return FrameIo::Closed;
}
}  // namespace

FrameIo writeFrame(int fd, const json& message, PipeClock::time_point deadline) {
  return frameIo(writeAllBefore(fd, encodeFrame(message), deadline));
}

FrameIo readFrame(int fd, std::string& payload, PipeClock::time_point deadline) {
  unsigned char header[kHeaderBytes];
  if (PipeIo io = readExactlyBefore(fd, reinterpret_cast<char*>(header), sizeof header, deadline); io != PipeIo::Ok)
    return frameIo(io);
  auto n = payloadLength(header);
  if (!n) return FrameIo::Garbage;
  payload.assign(*n, '\0');
  return frameIo(readExactlyBefore(fd, payload.data(), payload.size(), deadline));
}

json problemRequest(const Problem& p) { return {{"op", "problem"}, {"problem", p}}; }
json runRequest(const CandidateRequest& r) { return {{"op", "run"}, {"candidate", r}}; }
json cublasRequest(const TimingPolicy& p, bool verify, const std::string& algo) {
  json j = {{"op", "cublas"}, {"timing", p}, {"verify", verify}};
  if (!algo.empty()) j["algo"] = algo;
  return j;
}
json cublasLtRequest(const TimingPolicy& p) { return {{"op", "cublaslt"}, {"timing", p}}; }
json canaryRequest() { return {{"op", "canary"}}; }
json shutdownRequest() { return {{"op", "shutdown"}}; }

json okReply() { return {{"ok", true}, {"fatal", false}}; }
json resultReply(const CandidateResult& r, bool fatal) { return {{"ok", true}, {"result", r}, {"fatal", fatal}}; }
json cublasLtReply(const CublasLtPick& pick) {
  json j = resultReply(pick.result, false);
  j["algo"] = pick.algo;
  j["listed"] = pick.listed;
  j["screened"] = pick.screened;
  return j;
}
json errorReply(const std::string& message, int exitCode) {
  return {{"ok", false}, {"error", message}, {"exit_code", exitCode}, {"fatal", false}};
}
json helloReply(const WorkerInfo& info) { return {{"ok", true}, {"hello", info}, {"fatal", false}}; }

}  // namespace wire
}  // namespace gemmtune
