// SpeedBound: the fastest a stored row may claim to have run on its GPU. A row faster than the
// GPU's arithmetic peak for the row's precision class is no measurement (a tampered file, a broken
// timer): the lookup refuses to serve it (serving/Lookup) and `results` marks it.
//
// Peak = SMs × FMA lanes per SM × 2 FLOP per FMA × the SM clock: the one the driver reports
// (CU_DEVICE_ATTRIBUTE_CLOCK_RATE: the rated maximum boost clock, which data-centre boards do not
// exceed), or the one the row was timed at where that is higher (boards that boost past their
// rating; see kMaxClockOverRated). A row is refused above kSpeedMargin × peak. The margin covers
// timing error (medians of repeated CUDA event timings: well under 1 % at the sizes that come near
// peak) and a clock read between timings; a genuine SIMT SGEMM stays far below it: cuBLAS reached
// 51.7 TFLOP/s at 8192³ on an H100, 77 % of its 66.9 TFLOP/s peak.
//
// A GPU whose spec lacks the SM count or the clock (a profile without them, an old row), or whose
// compute capability has no known lane count, has no bound: nothing is refused for speed there.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "Family.hpp"
#include "ResultStore.hpp"
#include "gemmtune/GpuSpec.hpp"

namespace gemmtune::serving {

// The arithmetic a kernel's inner loop runs on (generator/Family.hpp), which sets the peak its rows
// are held to: strict, the FP32 pipes; faithful (three tensor-core products), a third of the FP16
// tensor-core rate (twice TF32's: fp16x3 and wgmmafp16x3 multiply FP16 parts).
using gemmtune::PrecisionClass;
std::string_view toString(PrecisionClass precision);

// The class `family` computes in.
PrecisionClass precisionClassOf(const Family& family);

// Refusal above this multiple of the peak (see above).
inline constexpr double kSpeedMargin = 1.1;
// A row timed at an SM clock above the rated one (its smClockMHz: consumer boards can run well past
// their rated boost clock, further than kSpeedMargin covers) is judged at that clock, up to this
// multiple of the rated clock.
inline constexpr double kMaxClockOverRated = 1.5;

struct PeakRate {
  double gflops = 0;
  std::string formula;  // "132 SMs × 128 FP32 lanes × 2 FLOP × 1980 MHz"
};

// FP32 FMA lanes per SM by compute capability: 64 on sm_60, sm_7x and sm_80, 128 on the others
// from Maxwell (sm_5x) to sm_12x; 0 (unknown) outside them.
int fp32LanesPerSm(int ccMajor, int ccMinor);
// Dense TF32 tensor-core FLOP per clock per SM (0: unknown, no faithful bound).
int tf32FlopsPerSmClock(int ccMajor, int ccMinor);

// The class's arithmetic peak on `gpu`; nullopt when the spec lacks what it takes. The one place
// a precision class's peak is defined.
std::optional<PeakRate> peakRate(const GpuSpec& gpu, PrecisionClass precision);

// Why `row` cannot have run as fast as it says on `gpu` (its stored GFLOP/s or the rate its median
// time implies, whichever is higher, above kSpeedMargin × the peak at the higher of the rated clock
// and the row's own, see kMaxClockOverRated); nullopt when it can, or when the GPU has no bound.
std::optional<std::string> implausibleSpeed(const db::StoredResult& row, const GpuSpec& gpu, PrecisionClass precision);

}  // namespace gemmtune::serving
