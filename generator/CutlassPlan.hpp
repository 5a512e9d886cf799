// CutlassPlan: the launch plan of the CUTLASS 2.x device::Gemm families (cutlass, tf32x3), whose
// templates share templates/cutlass_gemm.cuh: the identity swizzle's grid, batches × K slices in
// grid z, one lock per C tile per batch when K is sliced.
#pragma once

#include "Family.hpp"
#include "LaunchPlan.hpp"

namespace gemmtune {

// Warps and threads of a block: (BM/WM)·(BN/WN) warp tiles.
int cutlassWarps(const Config& c);
int cutlassThreads(const Config& c);

// What every device::Gemm family shares: the shared headers; warp_tiles_fit (first), then after the
// family's own constraints whole_loads (each thread copies whole `vectorWidth`-float accesses) and
// the rules on STAGES, SPLITK and SWIZZLE; the CUTLASS header tree and NVRTC options, threads,
// shared memory (STAGES·(BM+BN)·BK floats dynamic, Params static); the plan (cutlassGemmPlan with
// `vectorWidth` unguarded, 1 guarded).
void addCutlassGemmTraits(Family& f, int vectorWidth);

// log2 of the column group GemmIdentityThreadblockSwizzle<SWIZZLE>::get_log_tile picks for a row
// of `tilesN` tiles: the largest group its thresholds allow, so that few blocks idle.
int swizzleLogTile(int swizzle, long long tilesN);

// The plan of `c` (parameters BM, BN, SWIZZLE, SPLITK; threads and shared memory from its family)
// for `p`. `vectorWidth` > 1: the kernel reads A, B and C that many floats at a time, so the plan
// is refused unless the pointers are 4·vectorWidth-byte aligned (a strided batch's alignment is its
// base's and its strides': GemmProblem), the leading dimensions multiples of it, and so are the
// extents CUTLASS reads contiguously (A's row, B's row, C's row): CUTLASS predicates whole vectors.
LaunchPlan cutlassGemmPlan(const Config& c, const GemmProblem& p, int vectorWidth);

}  // namespace gemmtune
