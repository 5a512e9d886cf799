// CacheKey: everything that changes a measured answer (docs/design.md, "Cache keys"). Two results with the same
// key are measurements of the same thing; a stored row whose parts differ from the present
// environment is stale — shown as such, never served as best, re-tuned by `tune`.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "GemmShape.hpp"
#include "gemmtune/GpuSpec.hpp"

namespace gemmtune::db {

// Bump a part when the tuner changes how candidates are searched, timed or verified: rows
// measured the old way become stale.
inline constexpr const char* kTunerMethodVersion = "1";
inline constexpr const char* kTimingMethodVersion = "2";  // 2: the GPU alone (LaunchGate)
inline constexpr const char* kVerifyMethodVersion = "1";
std::string currentMethodVersion();  // "tune1.time2.verify1"

// The problem a result was measured on. Layout names the operand storage ("nn", "nt", "tn",
// "tt": op(A) then op(B), row-major as the templates compute it; problem/GemmShape.hpp);
// betaClass separates β = 0 (C not read) from general β; batch counts the independent M×N×K
// products one call computes. Batch comes last so that {m, n, k, layout, betaClass} still
// names a single product.
struct ProblemKey {
  long long m = 0, n = 0, k = 0;
  std::string layout = "nn";
  std::string betaClass = "any";
  long long batch = 1;
  bool operator==(const ProblemKey&) const = default;
  auto operator<=>(const ProblemKey&) const = default;  // a map key (serving's per-size counts)
};

// The key of a problem the rest of the house names by GemmShape (problem/GemmShape.hpp), and back;
// a stored layout that is none of nn, nt, tn, tt reads as nn (problemKeyProblem refuses such rows).
ProblemKey problemKeyOf(const GemmShape& shape, std::string betaClass = "any");
GemmShape shapeOf(const ProblemKey& key);

// What a size label adds for a layout other than nn and a batch other than 1, in GemmShape::str()'s
// words: " tn", " batch 64", " tn batch 64"; empty for nn batch 1.
std::string layoutAndBatchSuffix(const ProblemKey& p);

// Why `p` cannot name a stored problem (a size or batch below 1, a layout other than nn, nt,
// tn, tt, no β class); empty when it can.
std::string problemKeyProblem(const ProblemKey& p);

// Hash of the identity and limits of a GPU model (not of one board: UUID, ordinal, total memory
// and clocks that vary between boards of one model stay out, so results carry across them).
std::string gpuFingerprint(const GpuSpec& gpu);

struct CacheKey {
  std::string gpuFingerprint;
  int driverVersion = 0;       // cuDriverGetVersion, e.g. 13000
  std::string nvrtcVersion;    // "13.0"
  std::string arch;            // "sm_90"
  std::string compileOptions;  // NVRTC options joined by spaces, -arch excluded
  std::string sourceHash;      // sha256 of the exact source given to NVRTC
  std::string methodVersion = currentMethodVersion();
  std::string instance;        // canonical instance name
  ProblemKey problem;

  // sha256 over an unambiguous serialisation of every part. Batch 1 is not serialised, so the
  // keys of rows stored before batches existed (all batch 1) stay what they were.
  std::string hash() const;
};

// What is true now, as far as it is known. An unknown part (nullopt, or a function returning
// nullopt) is not used to judge staleness: an offline query knows the NVRTC version but not the
// driver. Built by serving::presentEnvironment() from generator/PresentBuild, the one builder of
// this build's facts.
struct PresentEnvironment {
  std::optional<int> driverVersion;
  std::optional<std::string> nvrtcVersion;
  std::string methodVersion = currentMethodVersion();
  // Per family name: the compile options and template source hash a new row would get.
  std::function<std::optional<std::string>(const std::string& family)> compileOptionsOf;
  std::function<std::optional<std::string>(const std::string& family)> sourceHashOf;
};

// The parts of a stored row that can go stale.
struct StoredKeyParts {
  int driverVersion = 0;
  std::string nvrtcVersion, compileOptions, sourceHash, methodVersion;
};

// Why a row is stale, one short phrase per differing part; empty when it is current. `family` is
// null when the row names no known family (its source and options cannot be judged).
std::vector<std::string> staleReasons(const StoredKeyParts& row, const std::string* family,
                                      const PresentEnvironment& present);

}  // namespace gemmtune::db
