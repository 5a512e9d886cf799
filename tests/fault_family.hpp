// The test-only family of tests/fault_kernels.cu and what each of its modes must end as, shared
// by the worker tests (one request per fault) and the engine tests (faults inside a tuning run).
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "CompileUnit.hpp"
#include "Family.hpp"
#include "NvrtcCompiler.hpp"

namespace gemmtune::test {

inline constexpr const char* kFaultTemplate = GEMMTUNE_SOURCE_DIR "/tests/fault_kernels.cu";
// The batch argument's header the template includes (a templates directory holds it next to the
// template; compileFault passes it to NVRTC).
inline constexpr const char* kBatchHeader = GEMMTUNE_SOURCE_DIR "/templates/batch.cuh";

inline std::string readText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline Family faultFamily() {
  Family f;
  f.name = "fault";
  f.templateFile = "fault_kernels.cu";
  f.headers = {"batch.cuh"};
  f.kernelName = "sgemm_fault";
  f.description = "naive SGEMM that faults on purpose (tests only)";
  // Mode 13 (ignores the batch index) stays out of the tuning domain: at batch 1 it is correct, so a
  // tuning run would store it ok and might crown it. Tests name it directly.
  f.params = {{"MODE", "mode", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, "which fault (see the template)"}};
  f.classic = std::vector<int>{0};  // the healthy mode: a tuning run times the classic config first
  f.threadsPerBlock = [](const Config&) { return 256; };
  f.dynamicSmemBytes = [](const Config&) { return 0; };
  f.staticSmemBytes = [](const Config&) { return 0; };
  f.plan = [](const Config& c, const GemmProblem& p) { return tiledPlan(c, p, {16, 16, 16}); };
  return f;
}

struct FaultExpectation {
  int mode;
  std::vector<std::string> statuses;  // any of these (the trap's code differs between drivers)
  bool restartsWorker;                // a sticky fault or a hang costs the worker
  // Caught by the canaries around C: every element of C may be right (max error 0), and the
  // detail must name where the stray write landed ("" for the other modes).
  std::string outsideC = "";
};

// Every mode that is faulty on any problem (1..12; mode 0 is healthy).
inline const std::vector<FaultExpectation>& faultExpectations() {
  static const std::vector<FaultExpectation> cases = {
      {1, {"runtime_fault:CUDA_ERROR_ILLEGAL_ADDRESS"}, true},
      {2, {"runtime_fault:CUDA_ERROR_MISALIGNED_ADDRESS"}, true},
      {3,
       {"runtime_fault:CUDA_ERROR_LAUNCH_FAILED", "runtime_fault:CUDA_ERROR_ILLEGAL_INSTRUCTION",
        "runtime_fault:CUDA_ERROR_ASSERT"},
       true},
      {4, {"timeout"}, true},
      {5, {"wrong_result"}, false},
      {6, {"wrong_result"}, false},
      {7, {"wrong_result"}, false},
      {8, {"wrong_result"}, false},
      {9, {"wrong_result"}, false},
      {10, {"wrong_result"}, false},
      {11, {"wrong_result"}, false, "padding column"},
      {12, {"wrong_result"}, false, "before C"},
  };
  return cases;
}

// The faults only a batched problem shows (mode 13 computes batch 0 in every batch).
inline const std::vector<FaultExpectation>& batchFaultExpectations() {
  static const std::vector<FaultExpectation> cases = {{13, {"wrong_result"}, false}};
  return cases;
}

// `config` (a fault family configuration) compiled straight from the test sources for `arch`.
inline CompileResult compileFault(const Config& config, const std::string& arch) {
  CompileUnit unit{readText(kFaultTemplate), config.kernelExpressions(), {}, {{"batch.cuh", readText(kBatchHeader)}}, {}};
  return NvrtcCompiler::compile(unit, arch);
}

inline bool statusExpected(const FaultExpectation& e, const std::string& status) {
  for (const auto& s : e.statuses)
    if (s == status) return true;
  return false;
}

}  // namespace gemmtune::test
