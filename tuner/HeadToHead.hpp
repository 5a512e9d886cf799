// HeadToHead: configurations timed against each other at one shape, the fair way to say which of
// two is faster when their single timings lie within the noise (a few per cent at small sizes).
#pragma once

#include <optional>
#include <vector>

#include "Family.hpp"
#include "SizeSpec.hpp"
#include "WorkerProtocol.hpp"

namespace gemmtune {

class Compiler;
class WorkerClient;

// Each configuration timed `rounds` times, round by round (A B C, A B C, ...) so that clock and
// thermal drift hit all alike, on `worker` whose problem is `shape` already; unverified (each was
// verified when first measured). The median of each one's round medians; nullopt for one that
// did not compile or failed.
std::vector<std::optional<double>> timeHeadToHead(WorkerClient& worker, const Compiler& compiler,
                                                  const std::string& arch, const std::vector<Config>& configs,
                                                  const GemmShape& shape, int rounds, TimingPolicy policy);

}  // namespace gemmtune
