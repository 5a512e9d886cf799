// Candidate: one configuration on its way from the family's domains to the timing queue, with
// everything learnt about it on the way and exactly one status.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "CompileResult.hpp"
#include "Family.hpp"
#include "Occupancy.hpp"
#include "SizeSpec.hpp"

namespace gemmtune {

enum class CandidateStage {
  Static,       // rejected by a static constraint of the family
  BeforeCompile,// rejected by a device limit known from the spec alone
  Compile,      // NVRTC failed
  AfterCompile, // rejected by a device limit that needs the compiled resources
  Pruned,       // legal, but skipped by an optional analytic rule
  Accepted,     // left to time
};

struct Candidate {
  Config config;
  CandidateStage stage = CandidateStage::Accepted;
  std::string limit;   // what rejected or pruned it: "constraint", "smem", "regs", ...; empty when accepted
  std::string reason;  // with the numbers: "67584 B > 49152 B without opt-in"
  std::string note;    // kept but worth knowing, e.g. "spills 16 B"

  int threadsPerBlock = 0;
  int staticSmemBytes = 0;   // from the spec; after compiling, from ptxas
  int dynamicSmemBytes = 0;
  bool smemOptIn = false;    // the launcher must raise CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
  std::optional<Dim3> grid;  // for the problem size, when one was given (a one-wave plan's: one wave, once compiled)
  bool oneWave = false;      // the plan's main launch is one wave (KernelLaunch::oneWave)

  std::shared_ptr<const CompileResult> compiled;  // set once compiled (cubin, lowered name, resources)
  std::optional<Occupancy> occupancy;             // set once compiled

  bool accepted() const { return stage == CandidateStage::Accepted; }
  bool rejected() const {
    return stage == CandidateStage::Static || stage == CandidateStage::BeforeCompile ||
           stage == CandidateStage::AfterCompile;
  }
  // "accepted", "rejected:smem", "compile_error", "pruned:underfill"
  std::string status() const;
  // status() plus the reason: "rejected:smem 67584 B > 49152 B without opt-in"
  std::string describe() const;
  // Shared memory the launch asks for: static + dynamic.
  int smemBytes() const { return staticSmemBytes + dynamicSmemBytes; }
};

}  // namespace gemmtune
