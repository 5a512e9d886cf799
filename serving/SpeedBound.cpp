#include "SpeedBound.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace gemmtune::serving {

std::string_view toString(PrecisionClass precision) {
  switch (precision) {
    case PrecisionClass::strict: return "strict FP32";
    case PrecisionClass::faithful: return "faithful FP32 (three TF32 or FP16 products on tensor cores)";
  }
  return "strict FP32";
}

PrecisionClass precisionClassOf(const Family& family) { return family.precision; }

int fp32LanesPerSm(int ccMajor, int ccMinor) {
  // Unknown architectures give no bound rather than a guess that could refuse genuine rows.
  if (ccMajor < 5 || ccMajor > 12) return 0;
  if ((ccMajor == 6 && ccMinor == 0) || ccMajor == 7 || (ccMajor == 8 && ccMinor == 0)) return 64;
  return 128;
}

// Dense TF32 tensor-core FLOP per clock per SM: the A100 (sm_80) 1024, consumer Ampere and Ada
// 256, Hopper 2048 (wgmma; mma.sync reaches about half). 0 (no bound) elsewhere.
int tf32FlopsPerSmClock(int ccMajor, int ccMinor) {
  if (ccMajor == 8) return ccMinor == 0 ? 1024 : 256;
  if (ccMajor == 9) return 2048;
  return 0;
}

std::optional<PeakRate> peakRate(const GpuSpec& gpu, PrecisionClass precision) {
  switch (precision) {
    case PrecisionClass::strict: {
      const int lanes = fp32LanesPerSm(gpu.ccMajor, gpu.ccMinor);
      if (gpu.smCount <= 0 || gpu.clockKhz <= 0 || lanes == 0) return std::nullopt;
      return PeakRate{gpu.smCount * lanes * 2.0 * gpu.clockKhz / 1e6,
                      fmt::format("{} SMs × {} FP32 lanes × 2 FLOP × {} MHz", gpu.smCount, lanes, gpu.clockKhz / 1000)};
    }
    case PrecisionClass::faithful: {
      // Three products per FP32 multiply-add, FP16 ones the fastest (fp16x3, wgmmafp16x3: twice
      // TF32's rate): a third of the tensor cores' FP16 rate.
      const int flops = 2 * tf32FlopsPerSmClock(gpu.ccMajor, gpu.ccMinor);
      if (gpu.smCount <= 0 || gpu.clockKhz <= 0 || flops == 0) return std::nullopt;
      return PeakRate{gpu.smCount * flops / 3.0 * gpu.clockKhz / 1e6,
                      fmt::format("{} SMs × {} FP16 FLOP / 3 products × {} MHz", gpu.smCount, flops, gpu.clockKhz / 1000)};
    }
  }
  return std::nullopt;
}

std::optional<std::string> implausibleSpeed(const db::StoredResult& row, const GpuSpec& rated, PrecisionClass precision) {
  // The peak at the clock the row was timed at where that is above the rated one (boards that
  // boost past it), at most kMaxClockOverRated times the rated clock (a stored clock is data too).
  GpuSpec gpu = rated;
  if (row.smClockMHz && rated.clockKhz > 0)
    gpu.clockKhz = std::max(rated.clockKhz,
                            static_cast<int>(std::min<double>(*row.smClockMHz * 1000.0, kMaxClockOverRated * rated.clockKhz)));
  const auto peak = peakRate(gpu, precision);
  if (!peak) return std::nullopt;
  const double bound = kSpeedMargin * peak->gflops;
  // The stored rate orders the rows; the median time is what the wave model and callers read:
  // either may be the lie. A median of 0 or less claims an infinite rate.
  double rate = row.gflops.value_or(0);
  std::string source = "stored";
  if (row.medianMs) {
    const double implied = *row.medianMs > 0 ? db::gflopsOf(row.key.problem, *row.medianMs)
                                             : std::numeric_limits<double>::infinity();
    if (implied > rate) {
      rate = implied;
      source = fmt::format("from its median time of {:.4g} ms", *row.medianMs);
    }
  }
  if (rate <= bound) return std::nullopt;  // a NaN rate (PostgreSQL stores one) is refused too
  return fmt::format("implausible speed: {:.4g} GFLOP/s {}, above the {:.0f} GFLOP/s that {} can reach in {} "
                     "({} × its {:.0f} GFLOP/s peak: {})",
                     rate, source, bound, gpu.name, toString(precision), kSpeedMargin, peak->gflops, peak->formula);
}

}  // namespace gemmtune::serving
