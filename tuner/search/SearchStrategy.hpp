// SearchStrategy: which candidates of one family the tuner times at one size, and in what order
// (ask/tell). The engine screens the space, compiles, verifies, times and records; the strategy
// only proposes the next candidate and hears back what it measured. A strategy object lives for
// one family across a whole run, so what it learnt at a smaller size guides the next one.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "SizeSpec.hpp"

namespace gemmtune {

// What a strategy sees of one candidate that passed every filter known before compiling.
struct SearchPoint {
  std::string base;          // the unguarded instance name: one configuration's identity across sizes
  bool classic = false;      // the family's yardstick: every strategy proposes it first
  long long blocks = 0;      // thread blocks the launch plan starts at this size (0: unknown)
  int warpsPerBlock = 0;
  // One of the family's skinnyTiles at a skinny shape (Family::skinnyTiles): the model search
  // proposes it right after the classic configuration, on top of --carry and outside the
  // patience, since ranked from
  // square sizes it would come last (docs/design.md, "The tuning engine").
  bool seed = false;
};

struct SearchContext {
  GemmShape shape;
  int smCount = 0;           // of the GPU being tuned
};

// What timing one proposal gave.
struct Measurement {
  std::optional<double> medianMs;  // nullopt: it failed (wrong result, fault, rejected after compiling)
  int blocksPerSm = 0;             // resident blocks per SM from its compiled resources (0: unknown)
};

class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;
  virtual std::string name() const = 0;
  // A new size for this strategy's family; `points` in enumeration order. Decides the order in
  // which it will propose them (plan()); it may stop before the end of it.
  virtual void start(const SearchContext& context, std::vector<SearchPoint> points) = 0;
  // Indices into start's points, in the order they will be proposed: the engine compiles ahead
  // along it.
  virtual const std::vector<size_t>& plan() const = 0;
  // The next index to time; nullopt: done at this size.
  virtual std::optional<size_t> next() = 0;
  // What timing `index` gave (also for rows resumed from an earlier run).
  virtual void tell(size_t index, const Measurement& m) = 0;
  // How many more proposals it expects at this size (for the ETA).
  virtual size_t expectedRemaining() const = 0;
  // Why `index` was never proposed at this size (recorded as pruned:rank with this reason).
  virtual std::string notTimedReason(size_t index) const = 0;
  // Whether a stored pruned:rank reason is one this strategy writes: a resumed run keeps such an
  // earlier run's pruning (RankPruning in engine/FamilyScreen says when), never another strategy's.
  virtual bool wroteNotTimedReason(const std::string& reason) const { (void)reason; return false; }
};

struct StrategyOptions {
  // model: at a size with history, at least this many in predicted order (then patience);
  // random: this many per size. 0 makes both time every candidate.
  int carry = 24;
};

// "model" (default), "exhaustive", "random"; throws UsageError naming the choices.
std::unique_ptr<SearchStrategy> makeStrategy(const std::string& name, const StrategyOptions& options);
const std::vector<std::string>& strategyNames();
// Every point, the classic configuration first, then in the order given: "exhaustive", and the
// basis's fixed lists of finalists (tuner/engine/BasisRun), whose screen marks no classic.
std::unique_ptr<SearchStrategy> makeExhaustiveSearch();

}  // namespace gemmtune
