// CandidateSpace: a family's configurations for one GPU (and optionally one problem size), each
// taken through the filters and, where it survives them, through NVRTC — the list the tuning
// engine times, with every dropped configuration and its reason kept.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "Candidate.hpp"
#include "CandidateFilter.hpp"
#include "Compiler.hpp"
#include "Family.hpp"
#include "gemmtune/GpuSpec.hpp"

namespace gemmtune {

// Parameter name -> the values to search instead of its default domain (ascending, distinct).
using ParamDomains = std::map<std::string, std::vector<int>>;

struct SpaceOptions {
  // With a size: the unguarded form where it divides M, N, K, else the guarded one. Without a
  // size: the guarded form, which is correct for every size.
  std::optional<GemmShape> size;
  // How every configuration reads A and B when there is no size (with one, the size's layout).
  Layout layout{};
  bool bothForms = false;              // list guarded and unguarded forms of every point
  ParamDomains domains;                // parameter -> the values to search instead of its domain
  FilterOptions filter;
};

struct SpaceSummary {
  int enumerated = 0;
  int staticallyRejected = 0;   // static constraints and device limits known before compiling
  int compiled = 0;             // handed to NVRTC
  int compileErrors = 0;
  int rejectedAfterCompile = 0;
  int pruned = 0;
  int accepted = 0;             // left to time

  static SpaceSummary of(const std::vector<Candidate>& candidates);
  // "750 enumerated, 412 statically rejected, 338 compiled, 0 compile errors, 0 rejected after
  // compile, 0 pruned, 338 left to time"
  std::string line() const;
};

// The configurations of `family` to consider, in enumeration order (no filtering).
std::vector<Config> spaceConfigs(const Family& family, const SpaceOptions& options);

// Candidates with the checks that need no compiler applied; accepted ones still need compiling.
std::vector<Candidate> screenSpace(const Family& family, const GpuSpec& gpu, const SpaceOptions& options);

// Compiles every candidate still accepted (in the compiler's thread pool, for gpu.arch()) and
// applies the checks that need the compiled resources.
void compileSpace(std::vector<Candidate>& candidates, const GpuSpec& gpu, Compiler& compiler, const SpaceOptions& options);

// screenSpace + compileSpace.
std::vector<Candidate> buildSpace(const Family& family, const GpuSpec& gpu, Compiler& compiler, const SpaceOptions& options);

// One problem in SizeSpec's grammar ("4096", "4096x1024x512"); throws UsageError otherwise.
GemmShape parseOneSize(std::string_view text);
// "BM=64,TM=8/16" -> {BM:[64], TM:[8,16]}; throws UsageError for unknown parameters or bad values.
ParamDomains parseParamDomains(const Family& family, std::string_view text);
// The family with those parameters' domains replaced (values beyond the defaults included).
Family withDomains(const Family& family, const ParamDomains& domains);

}  // namespace gemmtune
