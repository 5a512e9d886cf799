// FamilyPlans: how a configuration's family makes its launch plan for a problem (the vocabulary
// is problem/LaunchPlan.hpp). Family specs make plans (Family::plan), most through tiledPlan;
// planLaunch and formFor are how everyone else asks for one.
#pragma once

#include "LaunchPlan.hpp"

namespace gemmtune {

struct Config;

// What a single-kernel tiled family needs to say for its plan.
struct TiledGeometry {
  int tileM = 1, tileN = 1, tileK = 1;  // the unguarded form needs M % tileM == N % tileN == K % tileK == 0
  int vectorWidth = 1;                  // > 1: the unguarded form loads and stores that many floats at once
};

// The plan of a single-kernel template: grid (ceil(N / tileN), ceil(M / tileM), batch), the family's
// threads and dynamic shared memory, sgemmKernelArgs(). The unguarded form is refused where the
// tiles do not divide the problem, or the vector width does not divide the leading dimensions and
// the pointers' alignment; every form is refused where an operand with one tile of slack
// ((stored rows + a tile)·ld per operand) reaches 2^31 elements: templates form
// 32-bit offsets up to a tile past the last row or k step. The GPU's grid limits are checked with its other limits
// (device/LaunchLimits).
LaunchPlan tiledPlan(const Config& config, const GemmProblem& problem, const TiledGeometry& geometry);

// The plan of `config` (its family decides) for `problem`.
LaunchPlan planLaunch(const Config& config, const GemmProblem& problem);
// `config` in the form that runs `problem`: unguarded when that form's plan is runnable, else guarded.
Config formFor(Config config, const GemmProblem& problem);

}  // namespace gemmtune
