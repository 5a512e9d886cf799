// Shard: `tune --shard I/N` tunes a deterministic share of a sweep, so that N processes (a Slurm
// array, several machines) can split one `tune` command between them. The work is cut into units
// of one problem size and one family; every shard computes the same assignment from the same
// command line and keeps its own units, so the shards never overlap and together cover the sweep.
//
// Units are balanced by an estimated cost (statically valid configurations × the problem's work),
// largest first onto the least-loaded shard. A shard that starts a family at a size other than the
// family's smallest has no ranking carried from a smaller size and times that size in full: it
// measures more than the unsharded run would, never less.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "Family.hpp"
#include "SizeSpec.hpp"

namespace gemmtune {

struct ShardSpec {
  int index = 0;  // counted from 0 (Slurm's SLURM_ARRAY_TASK_ID with --array=0-(N-1))
  int count = 1;
  bool whole() const { return count == 1; }
  std::string str() const;  // "2/8"
};

// "I/N" with 0 <= I < N <= 4096; throws UsageError with one line naming the text otherwise.
ShardSpec parseShard(std::string_view text);

struct WorkUnit {
  GemmShape shape;
  const Family* family = nullptr;
  double cost = 0;  // relative: configurations × (1 + GFLOP of one run / 100)
};

// Every (size, family) pair of a sweep, in command-line order (sizes, then families).
std::vector<WorkUnit> workUnits(const std::vector<GemmShape>& sizes, const std::vector<const Family*>& families);

// The shard of each unit (same order as `units`): largest cost first, each onto the shard with
// the least cost so far (ties: the lower index). Deterministic for the same units and count.
std::vector<int> assignShards(const std::vector<WorkUnit>& units, int count);

// The units `shard` keeps.
std::vector<WorkUnit> unitsOf(const std::vector<WorkUnit>& units, const ShardSpec& shard);

}  // namespace gemmtune
