// FamilyModel: a configuration's time at any problem, from its family's geometry (tiles, waves of
// blocks over the SMs, K slices and their reduction, bytes moved) and the GPU's rates, calibrated
// by the measured rows of the same configuration and family. The lookup picks an unmeasured
// shape's kernel (and split-K) with it; bench/model_error reports its error on held-out rows.
//
//   raw(p) = max(compute, memory) + reduction + launch overhead
//     compute   = max(launchCost(blocks, residency, SMs) · 2·BM·BN·(⌈K/slices⌉ + kBlockFixedK) / (peak / SMs),
//                     waves · ⌈K/slices⌉ · 15 ns): the arithmetic, or the k loops' load latency
//                 (a one-wave launch: its kPerBlock in place of ⌈K/slices⌉)
//                 (waves = ⌈blocks / (SMs · blocks per SM)⌉; no floor without a known residency)
//     memory    = max(streamedBytes: 4·(M·K + K·N + M·N·(β≠0 ? 2 : 1))·batch, plus the further passes
//                 over an operand too large for L2 (below), / DRAM bandwidth,
//                     l2TrafficBytes: every tile's A and B panels, 4·K·(M·⌈N/BN⌉ + N·⌈M/BM⌉)·batch,
//                 / L2 bandwidth)
//     reduction = split-K partial bytes / DRAM bandwidth: the slices' sums are combined after
//                 their arithmetic, not under it (cutlass: each later slice reads and writes C
//                 in turn; thin: the last block of a tile adds every slice's partial tile)
//   predicted(p) = raw(p) · measured(a)/raw(a) · correction
// where a is the configuration's measured problem nearest p (SizeDistance), and correction is the
// family's median measured/raw ratio at its measured problem nearest p over that at a (1 when the
// family has nothing nearer than a): the row says how this configuration ranks in its family, the
// family says how efficiency moves between regimes (a 4096³ row runs nearer peak than a GEMV).
// model/ links only db: serving computes the geometry (launch plans, occupancy) and the rates.
#pragma once

#include <span>
#include <string>

#include "CacheKey.hpp"
#include "WaveModel.hpp"

namespace gemmtune {

// The GPU's rates; 0 where unknown (then only the compute term counts, in relative units).
struct MachineRates {
  int smCount = 0;
  double peakGflops = 0;      // FP32 FMA peak (serving::peakRate)
  double dramGBps = 0;        // 2 · memory clock · bus width / 8
  double launchOverheadMs = 0.003;
  double l2Bytes = 0;         // 0: unknown (no operand is taken to stream from DRAM more than once)
  double l2GBps = 0;          // L2 to the SMs (l2GBps below); 0: unknown (no L2 term)
};

// L2's bandwidth to the SMs, taken as this many bytes per SM per SM clock (about 8.4 TB/s on an
// H100 SXM at 1980 MHz, 2.5× its DRAM), for the FP32 (strict) families: the ones it was scored on
// (machineRatesOf sets no L2 rate for the tensor-core families, whose peak it would bind at square
// sizes, unmeasured). With it the model sees what a small tile costs at a
// skinny shape: on the H100's main job (2026-11-27, session 17), thin's 32×16 tile anchored at
// 2000×40×3001 (where the k loop's latency bound it) was predicted at 2859×80×1665 1.3× faster
// than cuBLAS and ran at 0.68× (A, 19 MB, read once per column of tiles: 143 MB from L2 there
// against 102 MB at the anchor). Scored on that database with the exact rows of a later
// `tune --seen` at 78 untuned shapes, this term alone: `sgemm()`'s worst 0.68× → 0.91× offline, the
// held-out error unchanged (bench/model_error); 13 to 38 bytes per clock gave the same worst, 51
// left it at 0.68×. With kBlockFixedK as well, measured on the H100: worst 0.86× (another shape).
inline constexpr double kL2BytesPerSmClock = 32;

// A block's prologue (filling its pipeline before the first FMA) and epilogue (its C tile out, a
// split's partial sums) cost about as long as its k loop over this many more elements of K (4
// steps of an 8-deep k tile), at every K slice, in the arithmetic term; the latency floor leaves it
// out (its 15 ns per element were fitted without it). Invisible where each slice is hundreds deep
// (the calibration absorbs it), it decides short
// slices: on the H100's main job (session 17), clusterk's 128×256 tile in 2 slices, calibrated at
// 1024³, was picked with cuBLAS excluded at 1476×3089×55, 2412×1934×124 and 1022×1085×125 and ran
// at 0.61-0.70× cuBLAS, where cutlass's 64×128 tile unsliced ran at 0.88-0.95×. Scored on that
// database with a later `tune --seen`'s exact rows (with the L2 term): the held-out error 17.7 % →
// 17.3 % median (13.3 % → 12.5 % on the `tune --seen` database); 64 raised it (17.6 %).
inline constexpr double kBlockFixedK = 32;

// One configuration's launch at one problem, as its plan and occupancy give it.
struct KernelGeometry {
  long long blocks = 0;     // the whole grid: tiles × K slices × batch
  Residency residency;
  long long tileM = 0, tileN = 0;  // the C tile one block computes
  int slices = 1;                  // K slices (SPLITK)
  long long tileK = 0;             // the k depth of one step of a block's loop; 0: unknown
  double partialBytes = 0;         // extra DRAM traffic of the K slices' reduction
  // Elements of K one block's loop runs, where not ⌈K/slices⌉: a one-wave launch (streamk) shares
  // all tiles' k steps evenly, plus kBlockFixedK for each tile segment past its first. 0: ⌈K/slices⌉.
  double kPerBlock = 0;
};

// Tiles of `tile` along `extent` (the last one partial).
long long tilesAlong(long long extent, long long tile);
// DRAM bytes every kernel must move at `p`: A and B once, C written (and read when β ≠ 0).
double compulsoryBytes(const db::ProblemKey& p);
// DRAM bytes a launch of geometry `g` moves at `p`: the compulsory bytes, plus the further passes
// over an operand too large to stay in L2 (more than half of it): B once per row of tiles, A once
// per column of tiles, at most once per wave; where both are that large, only the cheaper.
double streamedBytes(const db::ProblemKey& p, const KernelGeometry& g, const MachineRates& m);
// Bytes the blocks of geometry `g` load from L2 at `p`: each tile reads its A panel and its B panel
// over its K slice, so A is read once per column of tiles and B once per row of tiles.
double l2TrafficBytes(const db::ProblemKey& p, const KernelGeometry& g);
// DRAM speed in GB/s from the memory clock (kHz, double data rate) and bus width.
double dramGBps(int memClockKhz, int memBusWidthBits);
// L2 speed in GB/s from the SM count and the SM clock (kHz), by kL2BytesPerSmClock.
double l2GBps(int smCount, int smClockKhz);

// The uncalibrated time of a launch (ms when the rates are known).
double rawMs(const db::ProblemKey& p, const KernelGeometry& g, const MachineRates& m);
// A kernel whose tiles are unknown (cuBLAS): the roofline, plus the launch overhead.
double rooflineMs(const db::ProblemKey& p, const MachineRates& m);

// A measured row in the model's terms.
struct Observation {
  db::ProblemKey problem;
  double measuredMs = 0;
  double rawMs = 0;
  double ratio() const { return measuredMs / rawMs; }
};

// The correction is kept within [1/kMaxCorrection, kMaxCorrection]: a family's medians at two
// sizes are evidence, not a licence to move a prediction by more than this.
inline constexpr double kMaxCorrection = 4.0;

// The median ratio of `rows` at their problem nearest `p` (the family's efficiency there); 0 when
// `rows` is empty. `nearest` receives that problem.
double ratioNear(const db::ProblemKey& p, std::span<const Observation> rows, db::ProblemKey* nearest = nullptr);

// measured(a)/raw(a) · correction, as above, from the configuration's own rows and its family's
// (the family's may include the own); without own rows, the family's ratio near `asked`; 0 when
// there is nothing to calibrate from. predicted(asked) = raw(asked) · this, for every split-K of
// the configuration (one program: one calibration).
double calibrationRatio(const db::ProblemKey& asked, std::span<const Observation> own, std::span<const Observation> family);

}  // namespace gemmtune
