// FamilyScreen: the first phase of a family's turn at a size. Its space is screened before
// anything compiles; the rejected are recorded at once, the rest become the search strategy's
// points. RankPruning then decides which of an earlier run's rank pruning stands (resume).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "Candidate.hpp"
#include "CandidateSpace.hpp"
#include "TuneOptions.hpp"
#include "engine/SizeRun.hpp"
#include "search/SearchStrategy.hpp"

namespace gemmtune {

struct EngineContext;
class RowRecorder;

// The space screening sees at `shape` (also what the run prefetches: CompileAhead.hpp).
SpaceOptions spaceAt(const GemmShape& shape, const TuneOptions& options);

struct ScreenedFamily {
  std::vector<Candidate> candidates;
  std::vector<std::string> sourceHashes;  // per candidate: the family's, then the source it compiled from
  std::vector<size_t> indexOf;            // search point -> candidate
  std::vector<SearchPoint> points;        // for the strategy's start (moved out there)
  std::optional<Config> classic;          // the family's yardstick at this size

  bool isClassic(const Config& c) const { return classic && c == *classic; }
  bool hasClassicPoint() const;
  Candidate& candidateOf(size_t point) { return candidates[indexOf[point]]; }
  const Candidate& candidateOf(size_t point) const { return candidates[indexOf[point]]; }
  const std::string& sourceHashOf(size_t point) const { return sourceHashes[indexOf[point]]; }
};

class FamilyScreen {
 public:
  FamilyScreen(EngineContext& context, RowRecorder& rows) : context_(context), rows_(rows) {}
  // Screens `turn.family` at its size and records the rejected; the classic configuration
  // becomes the turn's yardstick.
  ScreenedFamily screen(FamilyTurn& turn);
  // The basis (BasisRun): only `configs`, each in its form for the turn's size, in this order;
  // no yardstick (the basis times what its budget allows, the classic configuration included
  // only where it is a finalist).
  ScreenedFamily screenGiven(FamilyTurn& turn, const std::vector<Config>& configs);

 private:
  // Records the rejected among `s.candidates`; the rest become the strategy's points.
  void admit(FamilyTurn& turn, ScreenedFamily& s);
  const std::string& sourceHashOf(const Family& family);

  EngineContext& context_;
  RowRecorder& rows_;
  std::map<const Family*, std::string> sourceHashes_;
};

class RankPruning {
 public:
  // Call after `strategy` started at this size: it judges whose reasons it wrote.
  RankPruning(const ScreenedFamily& screened, const RowRecorder& rows, const SearchStrategy& strategy,
              const TuneOptions& options, const GemmShape& shape);
  // The stored reason of a point whose pruning stands, or null.
  const std::string* keptReason(size_t point) const;

 private:
  const ScreenedFamily& screened_;
  const RowRecorder& rows_;
  const SearchStrategy& strategy_;
  const GemmShape& shape_;
  bool stands_ = false;
};

}  // namespace gemmtune
