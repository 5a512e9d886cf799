// WaveModel: how a configuration's time moves from one problem to another — with K, and with the
// waves of thread blocks over the SMs (a partial wave costs a whole one). The tuner's model search
// orders candidates by it; the lookup predicts with it which tuned row runs an untuned shape best.
#pragma once

#include "CacheKey.hpp"

namespace gemmtune {

// Blocks an SM needs at once to keep its FMA pipes busy: about 8 resident warps (two per
// sub-partition), no more than fit. A block of 8 warps fills an SM alone; one of 2 warps needs 4.
int blocksToSaturate(int blocksPerSm, int warpsPerBlock);

// The model's prediction for a configuration measured at `from` (blocksFrom blocks) run at `to`
// (blocksTo blocks): time scales with K and with the number of waves, a wave being every SM
// running `saturating` blocks at once (blocksToSaturate). A partial wave costs a whole one: that
// is why a large tile that underfills the GPU at 1024 can win at 4096. Nothing known of the
// launch (a count of 0): scaled by the work.
double predictMs(double msFrom, const db::ProblemKey& from, long long blocksFrom, const db::ProblemKey& to,
                 long long blocksTo, int saturating, int smCount);

}  // namespace gemmtune
