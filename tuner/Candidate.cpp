#include "Candidate.hpp"

namespace gemmtune {

std::string Candidate::status() const {
  switch (stage) {
    case CandidateStage::Accepted: return "accepted";
    case CandidateStage::Compile: return "compile_error";
    case CandidateStage::Pruned: return "pruned:" + limit;
    case CandidateStage::Static:
    case CandidateStage::BeforeCompile:
    case CandidateStage::AfterCompile: return "rejected:" + limit;
  }
  return "unknown";
}

std::string Candidate::describe() const { return reason.empty() ? status() : status() + " " + reason; }

}  // namespace gemmtune
