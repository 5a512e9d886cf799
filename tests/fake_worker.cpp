// fake_worker: speaks the worker protocol without a GPU and misbehaves on purpose, so the
// WorkerClient's deadlines, restarts and canary logic can be tested on any machine.
//   fake_worker MODE STATE_DIR
// Every start and request is appended to STATE_DIR/log ("start", "canary", "problem", "run"),
// every process id to STATE_DIR/pids.
// Modes: healthy, no-gpu, hang-hello, bad-canary, crash-on-run, hang-on-run, garbage-on-run,
// noncbor-on-run, fault-on-run, refuse-run, exit-after-canary, crash-then-sick, table (a
// simulated GPU: see simulatedMs), cold-table (the same, but every instance's first timing is
// taken at 345 MHz of the 1980 MHz boost clock, as on a GPU left idle while NVRTC works).
// STATE_DIR is created if missing. A GPU that falls sick mid-run: with a file STATE_DIR/sick-after
// holding N, a table worker crashes at its N-th timing, and every later start fails its canary.
// A worker killed from outside: with STATE_DIR/kill-at holding N, the worker SIGKILLs itself at
// its N-th timing, once. A tuner killed mid-run: with STATE_DIR/kill-tuner-at holding N, the
// worker SIGKILLs its parent (the tuner) at the N-th timing in STATE_DIR/log. A noisy GPU: with STATE_DIR/noise holding F, every timing is off by
// up to ±F (deterministic per instance, size and call). A wrong cuBLAS: with STATE_DIR/cublas-wrong
// present, a table worker answers every verified "cublas" request wrong_result (still timed).
// cuBLASLt: with STATE_DIR/cublaslt-pick present, a table worker answers "cublaslt" with one
// configuration, at the file's number (default 0.8) x cuBLAS's time, named by the file's second word
// (default lt1_t2_k1_r0_w0_s0_c0_i0_g0); without it (and in every other mode), with none. Another
// cuBLAS: STATE_DIR/cublas-version holds the version the worker reports.
#include <algorithm>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "PipeIo.hpp"
#include "worker/WorkerWire.hpp"

using namespace gemmtune;

namespace {

std::string mode, stateDir;
pid_t parentAtStart = 0;  // the process that started this worker

void note(const std::string& what) { std::ofstream(stateDir + "/log", std::ios::app) << what << "\n"; }

int count(const std::string& what) {
  int n = 0;
  std::ifstream in(stateDir + "/log");
  for (std::string line; std::getline(in, line);) n += line.rfind(what, 0) == 0;
  return n;
}

// The N of STATE_DIR/sick-after, or 0.
int sickAfter() {
  int n = 0;
  std::ifstream(stateDir + "/sick-after") >> n;
  return n;
}

int starts() { return count("start"); }

// Frames as the real worker reads and writes them (WorkerWire), without deadlines: the parent
// decides how long to wait. Raw bytes (garbage on purpose) go out as they are.
void send(const std::string& bytes) {
  if (writeAllBefore(1, bytes, PipeClock::time_point::max()) != PipeIo::Ok) std::_Exit(4);
}

void reply(const nlohmann::json& j) {
  if (wire::writeFrame(1, j, PipeClock::time_point::max()) != wire::FrameIo::Ok) std::_Exit(4);
}

bool receive(nlohmann::json& out) {
  std::string payload;
  if (wire::readFrame(0, payload, PipeClock::time_point::max()) != wire::FrameIo::Ok) return false;
  out = wire::decodePayload(payload);
  return true;
}

[[noreturn]] void hangWithGrandchild() {
  if (::fork() == 0) {
    ::execlp("sleep", "sleep", "1000", static_cast<char*>(nullptr));
    std::_Exit(127);
  }
  for (;;) ::pause();
}

// Mode `table`: a simulated GPU whose times depend only on the instance, the problem and the
// launch (FNV-1a of the name picks an efficiency between 20 and 80 % of 50 TFLOP/s; an SM is busy
// with 8 warps, so blocks run in waves of 132 × ceil(8 / warps per block), and a partial wave
// costs a whole one), so searches are deterministic and comparable between runs, and a large tile
// that underfills the 132 SMs at a small size can be the best at a large one, as on a real GPU.
// A batch does its products' work (the launch's blocks count every batch); a layout other than
// nn is in the instance name, so it has its own efficiency, and cuBLAS's differs by layout too.
double simulatedMs(const std::string& instance, const Problem& p, long long blocks, long long threads) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : instance) h = (h ^ c) * 1099511628211ull;
  const double efficiency = 0.2 + 0.6 * static_cast<double>(h % 1000) / 1000.0;
  const long long warps = std::max(1LL, (threads + 31) / 32), slots = 132 * ((8 + warps - 1) / warps);
  const double waveLoss = blocks > 0 ? static_cast<double>((blocks + slots - 1) / slots) * slots / static_cast<double>(blocks) : 1.0;
  return 2.0 * p.M * p.N * p.K * static_cast<double>(p.batch) / (50e12 * efficiency) * 1e3 * waveLoss;
}

Problem problem{256, 256, 256, 0.0};

CandidateResult okResult() {
  CandidateResult r;
  r.status = "ok";
  r.medianMs = r.minMs = 1.0;
  r.reps = 5;
  return r;
}

// The launch of a "run" request: blocks in the grid and threads per block.
std::pair<long long, long long> launchSize(const nlohmann::json& candidate) {
  const auto& launch = candidate.at("plan").at("launches").at(0);
  auto volume = [](const nlohmann::json& d) { return d.at(0).get<long long>() * d.at(1).get<long long>() * d.at(2).get<long long>(); };
  return {volume(launch.at("grid")), volume(launch.at("block"))};
}

// STATE_DIR/noise holding F: each timing is off by up to ±F (a fraction), differently on
// each call, as a real GPU's are: re-timing can reorder near-equal configurations.
void addNoise(CandidateResult& r, const std::string& op, const std::string& instance) {
  double noise = 0;
  std::ifstream(stateDir + "/noise") >> noise;
  if (noise > 0) {
    const std::string key = instance + " " + std::to_string(problem.M) + " " + std::to_string(count(op + " "));
    std::uint64_t h = 1469598103934665603ull;
    for (unsigned char c : key) h = (h ^ c) * 1099511628211ull;
    r.medianMs = r.minMs = r.medianMs * (1 + noise * (static_cast<double>(h % 2001) / 1000.0 - 1));
  }
}

// STATE_DIR/sick-after, kill-tuner-at and kill-at: the GPU falls sick, the tuner is killed or the
// worker is, at this timing.
void failAtThisTiming(const std::string& op) {
  if (op == "run" && sickAfter() > 0 && count("run ") + 1 >= sickAfter()) {
    std::ofstream(stateDir + "/sick") << "sick\n";
    ::abort();
  }
  int killTunerAt = 0;
  std::ifstream(stateDir + "/kill-tuner-at") >> killTunerAt;
  // Only a tuner: the CLI (with GEMMTUNE_SIMULATED_GPU in its environment) that started this worker
  // and still is its parent. A worker started by a test process itself (the in-process engine
  // tests) has none to kill.
  if (op == "run" && killTunerAt > 0 && count("run ") + 1 == killTunerAt && std::getenv("GEMMTUNE_SIMULATED_GPU") &&
      parentAtStart > 1 && ::getppid() == parentAtStart) {
    note("tuner killed");
    ::kill(parentAtStart, SIGKILL);
  }
  int killAt = 0;
  std::ifstream(stateDir + "/kill-at") >> killAt;
  if (op == "run" && killAt > 0 && count("run ") + 1 == killAt && count("killed") == 0) {
    note("killed");
    ::kill(::getpid(), SIGKILL);
  }
}

// Modes `table` and `cold-table`: a "run", "cublas" or "cublaslt" request answered with a simulated time.
void answerFromTable(const std::string& op, const nlohmann::json& req) {
  CandidateResult r = okResult();
  static std::set<std::string> timedOnce;
  const std::string instance = op == "run" ? req.at("candidate").at("instance").get<std::string>()
                                            : "cublas" + (problem.layout == Layout{} ? "" : "_" + problem.layout.text());
  // cuBLASLt's configuration (STATE_DIR/cublaslt-pick present): the file's number (default 0.8) x cuBLAS's own call.
  const bool lt = op == "cublaslt" || !req.value("algo", std::string()).empty();
  long long blocks = 0, threads = 0;
  if (op == "run" && req.at("candidate").value("lowered_names", nlohmann::json::array()).empty()) {
    // As the real worker: a cubin with no kernel named cannot be loaded.
    CandidateResult refused;
    refused.status = "launch_error";
    refused.detail = "no kernel named to load";
    note("refused " + instance);
    reply(wire::resultReply(refused, false));
    return;
  }
  if (op == "run") std::tie(blocks, threads) = launchSize(req.at("candidate"));
  // cuBLAS runs faster than most candidates, but within the H100's peak: its rows are served, and
  // the lookup's speed bound refuses a row above 1.1 x the peak (nn: 62.7 of 66.9 TFLOP/s).
  double ltFactor = 0.8;  // the file's number, where it holds one
  std::string ltAlgo = "lt1_t2_k1_r0_w0_s0_c0_i0_g0";  // its second word, where it holds one
  if (lt) std::ifstream(stateDir + "/cublaslt-pick") >> ltFactor >> ltAlgo;
  if (!(ltFactor > 0)) ltFactor = 0.8;
  r.medianMs = r.minMs = simulatedMs(instance, problem, blocks, threads) * (op == "run" ? 1.0 : 0.6) * (lt ? ltFactor : 1.0);
  r.reps = 10;
  r.smClockMHz = 1980;
  addNoise(r, op, instance);
  // As the real worker: a verified run's notes (skipped layouts, faithful figures) in its detail.
  if (op == "run" && req.at("candidate").value("verify", true)) r.detail = "verified: simulated notes";
  if (mode == "cold-table" && op == "run" && timedOnce.insert(instance + std::to_string(problem.M)).second) {
    r.smClockMHz = 345;
    r.medianMs = r.minMs = r.medianMs * 1980 / 345;
  }
  if (op == "cublas" && req.value("verify", false) && std::filesystem::exists(stateDir + "/cublas-wrong")) {
    r.status = "wrong_result";
    r.detail = "small integers, beta=0 (packed): 1 of 4 elements wrong";
  }
  failAtThisTiming(op);
  note(op + (op == "cublas" && req.value("verify", false) ? " verified " : " ") + instance + (lt ? " lt " : " ") +
       std::to_string(problem.M));
  if (op == "cublaslt")
    reply(wire::cublasLtReply(CublasLtPick{r, ltAlgo, 40, 30}));
  else
    reply(wire::resultReply(r, false));
}

// The misbehaving modes: a "run" or "cublas" request. Returns the exit code when the worker ends.
std::optional<int> answerRun() {
  if (mode == "crash-on-run" || mode == "crash-then-sick") ::abort();
  if (mode == "hang-on-run") hangWithGrandchild();
  if (mode == "garbage-on-run") {
    send(std::string("\xff\xff\xff\xff garbage", 12));
    for (;;) ::pause();
  }
  if (mode == "noncbor-on-run") {
    send(std::string("\x03\x00\x00\x00\xff\xfe\xfd", 7));
    for (;;) ::pause();
  }
  if (mode == "fault-on-run") {
    CandidateResult r;
    r.status = "runtime_fault:CUDA_ERROR_ILLEGAL_ADDRESS";
    r.detail = "cuStreamSynchronize: an illegal memory access was encountered";
    reply(wire::resultReply(r, true));
    return 3;
  }
  if (mode == "refuse-run") {
    reply(wire::errorReply("no problem set: send a problem before candidates or cuBLAS timings", 2));
    return std::nullopt;
  }
  reply(wire::resultReply(okResult(), false));
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  mode = argv[1];
  stateDir = argv[2];
  parentAtStart = ::getppid();
  std::filesystem::create_directories(stateDir);
  const bool sickStart = (mode == "crash-then-sick" && starts() >= 1) ||
                         (sickAfter() > 0 && std::filesystem::exists(stateDir + "/sick"));
  note("start");
  std::ofstream(stateDir + "/pids", std::ios::app) << ::getpid() << "\n";
  if (mode == "no-gpu") {
    reply(wire::errorReply("no CUDA driver: libcuda.so.1 not found", 69));
    return 69;
  }
  if (mode == "hang-hello") hangWithGrandchild();
  WorkerInfo info;
  info.name = "Fake GPU";
  info.arch = "sm_90";
  info.maxClockMHz = 1980;
  std::ifstream(stateDir + "/cublas-version") >> info.cublasVersion;  // another cuBLAS: another row key
  reply(wire::helloReply(info));

  for (nlohmann::json req; receive(req);) {
    const std::string op = req.at("op");
    note(op);
    if (op == "shutdown") {
      reply(wire::okReply());
      return 0;
    }
    if (op == "canary") {
      CandidateResult r = okResult();
      if (mode == "bad-canary" || sickStart) r.status = "wrong_result";
      reply(wire::resultReply(r, false));
      if (mode == "exit-after-canary") return 0;
      continue;
    }
    if (op == "problem") {
      problem = req.at("problem").get<Problem>();
      reply(wire::okReply());
      continue;
    }
    const bool ltPick = (mode == "table" || mode == "cold-table") && std::filesystem::exists(stateDir + "/cublaslt-pick");
    if (op == "cublaslt" && !ltPick) {  // no cuBLASLt here, so no configuration is kept
      CandidateResult r;
      r.status = "launch_error";
      r.detail = "the fake worker has no cuBLASLt";
      reply(wire::cublasLtReply(CublasLtPick{r, "", 0, 0}));
      continue;
    }
    if (mode == "table" || mode == "cold-table") {
      answerFromTable(op, req);
      continue;
    }
    // run / cublas
    if (auto code = answerRun()) return *code;
  }
  return 0;
}
