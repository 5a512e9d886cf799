// WaveModel: how a configuration's time moves from one problem to another — with K, and with the
// waves of thread blocks over the SMs (a partial wave costs a whole one) and how many blocks
// share an SM in each wave. The tuner's model search orders candidates by it; the lookup predicts
// with it which tuned row runs an untuned shape best.
#pragma once

#include "CacheKey.hpp"

namespace gemmtune {

// What the compiled kernel lets an SM hold: 0 in either field when unknown.
struct Residency {
  int blocksPerSm = 0;
  int warpsPerBlock = 0;
};

// An SM's FMA throughput with `warps` resident, as a fraction of a full one. About 8 warps (two
// per sub-partition) fill it; below that a block's own instruction-level parallelism hides much
// of the latency, so throughput falls off more slowly than the warp count: measured on an H100,
// a 4-warp CUTLASS 64×256 tile alone on an SM ran at 0.74 of two such tiles sharing one. The
// square root (0.71 at 4 warps) is that curve. Linear here would call sharing an SM free.
double smThroughput(int warps);

// Time, in units of one block's work on a full SM, that `blocks` take on `smCount` SMs: whole
// waves of as many blocks per SM as fit (no more than there are blocks for), then the remainder
// spread over the SMs, each wave as long as its busiest SM.
double launchCost(long long blocks, Residency residency, int smCount);

// The model's prediction for a configuration measured at `from` (blocksFrom blocks) run at `to`
// (blocksTo blocks): time scales with K and with launchCost. That is why a large tile that
// underfills the GPU at 1024 can win at 4096, and why two 4-warp tiles sharing an SM at 2048 are
// slower than the same tile alone on one at 1024. Nothing known of the launch: scaled by the work.
double predictMs(double msFrom, const db::ProblemKey& from, long long blocksFrom, const db::ProblemKey& to,
                 long long blocksTo, Residency residency, int smCount);

}  // namespace gemmtune
