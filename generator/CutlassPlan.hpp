// CutlassPlan: what the families built on templates/cutlass_gemm.cuh share (cutlass, clusterk,
// tf32x3, fp16x3: constraints, headers, threads, shared memory), and the launch plan of the FP32
// device::Gemm ones (cutlass, clusterk, tf32x3): the identity swizzle's grid, batches × K slices in
// grid z, one lock per C tile per batch when K is sliced serially (not for clusterk's clusters).
#pragma once

#include <string>
#include <vector>

#include "Family.hpp"
#include "LaunchPlan.hpp"

namespace gemmtune {

// Warps and threads of a block: (BM/WM)·(BN/WN) warp tiles.
int cutlassWarps(const Config& c);
int cutlassThreads(const Config& c);

// What every template built on templates/cutlass_gemm.cuh shares: the shared headers;
// warp_tiles_fit (first), then after the family's own constraints whole_loads (each thread copies
// whole accesses of `elementsPerAccess` operand elements of `elementBytes` each) and the rules on
// STAGES, SPLITK (where the family has it) and SWIZZLE; the CUTLASS header tree and NVRTC options,
// threads, shared memory (STAGES·(BM+BN)·BK elements dynamic, Params static). Not the plan.
void addCutlassKernelTraits(Family& f, int elementsPerAccess, int elementBytes);

// The FP32 device::Gemm families (cutlass, clusterk, tf32x3): addCutlassKernelTraits over floats and the
// plan (cutlassGemmPlan with `vectorWidth` unguarded, 1 guarded).
void addCutlassGemmTraits(Family& f, int vectorWidth);

// The rules on warps every SIMT CUTLASS family shares: four_to_eight_warps ((BM/WM)·(BN/WN), the
// range of CUTLASS's SIMT kernel list) and at_most_four_warp_columns (BN/WN, no 1×8 arrangement).
std::vector<Constraint> cutlassSimtWarpConstraints();

// Why no FP32 CUTLASS plan runs `p` (a malformed problem; sizes, leading dimensions or the batch
// count beyond int, as the templates take them; A, B or C not 4-byte aligned), or empty.
std::string cutlassProblemRefusal(const GemmProblem& p);

// The launch of `c`'s main kernel on `grid`: its family's threads and dynamic shared memory, the
// gemmtune argument list and the workspace.
KernelLaunch cutlassLaunch(const Config& c, Dim3 grid);

// log2 of the column group GemmIdentityThreadblockSwizzle<SWIZZLE>::get_log_tile picks for a row
// of `tilesN` tiles: the largest group its thresholds allow, so that few blocks idle.
int swizzleLogTile(int swizzle, long long tilesN);

// The grid GemmIdentityThreadblockSwizzle<SWIZZLE> plans for `p`'s rows and `columns` columns (N,
// or fp16x3's N rounded up to 8) in BM × BN tiles: x and y, the tiles it covers, or a refusal
// where a dimension exceeds its limit. Grid z is the plan's.
struct CutlassGrid {
  unsigned x = 0, y = 0;
  long long tilesM = 0, tilesN = 0;
  std::string refusal;
};
CutlassGrid cutlassGrid(const Config& c, const GemmProblem& p, long long columns);

// The plan of `c` (parameters BM, BN, SWIZZLE, SPLITK; threads and shared memory from its family)
// for `p`. `vectorWidth` > 1: the kernel reads A, B and C that many floats at a time, so the plan
// is refused unless the pointers are 4·vectorWidth-byte aligned (a strided batch's alignment is its
// base's and its strides': GemmProblem), the leading dimensions multiples of it, and so are the
// extents CUTLASS reads contiguously (A's row, B's row, C's row): CUTLASS predicates whole vectors.
// K slices take turns through one lock per C tile (the workspace), unless slicesSummedOnChip: the
// family sums them itself (clusterk, in its cluster), needs no workspace, and the plan says so.
LaunchPlan cutlassGemmPlan(const Config& c, const GemmProblem& p, int vectorWidth, bool slicesSummedOnChip = false);

}  // namespace gemmtune
