#include "NearestChoice.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "Occupancy.hpp"
#include "SpeedBound.hpp"

namespace gemmtune::serving {

MachineRates machineRatesOf(const GpuSpec& gpu, PrecisionClass precision) {
  MachineRates m;
  m.smCount = gpu.smCount;
  if (auto peak = peakRate(gpu, precision)) m.peakGflops = peak->gflops;
  if (gpu.memClockKhz > 0 && gpu.memBusWidthBits > 0) m.dramGBps = dramGBps(gpu.memClockKhz, gpu.memBusWidthBits);
  m.l2Bytes = double(gpu.l2Bytes);
  // Scored on the FP32 families only (FamilyModel.hpp, kL2BytesPerSmClock).
  if (precision == PrecisionClass::strict && gpu.smCount > 0 && gpu.clockKhz > 0)
    m.l2GBps = l2GBps(gpu.smCount, gpu.clockKhz);
  return m;
}

namespace {

// A one-wave launch (streamk): the wave's blocks share all tiles' k steps evenly, each block's
// segments past its first cost kBlockFixedK more, and each block stores at most one partial tile
// (about every block does), which the tile's first block reads back.
void oneWaveGeometry(KernelGeometry& g, const db::ProblemKey& at, int smCount) {
  g.blocks = oneWaveBlocks(g.blocks, smCount, g.residency.blocksPerSm);
  if (g.blocks <= 0 || g.tileM <= 0 || g.tileN <= 0 || g.tileK <= 0) return;
  const double tiles =
      double(tilesAlong(at.m, g.tileM)) * double(tilesAlong(at.n, g.tileN)) * double(std::max(1LL, at.batch));
  const double steps = tiles * double(tilesAlong(at.k, g.tileK));
  const double blocks = double(g.blocks);
  g.kPerBlock = steps / blocks * double(g.tileK) + kBlockFixedK * tiles / blocks;
  g.partialBytes = 2.0 * 4.0 * double(g.tileM) * double(g.tileN) * blocks;
}

}  // namespace

std::optional<KernelGeometry> geometryOf(const Config& config, const db::StoredResult& row, const GpuSpec& gpu,
                                         const db::ProblemKey& problem) {
  db::ProblemKey at = problem;
  at.layout = config.layout.text();
  const GemmProblem packed = GemmProblem::packed(shapeOf(at));
  Config form = config;
  LaunchPlan plan = planLaunch(form, packed);
  if (!plan.runnable() && !form.guarded) {
    form.guarded = true;  // the same grid, every access checked
    plan = planLaunch(form, packed);
  }
  if (!plan.runnable() || plan.launches.empty()) return std::nullopt;
  const Family& f = *form.family;
  const Occupancy occ = computeOccupancy(gpu, {f.threadsPerBlock(form), row.registers.value_or(0),
                                               std::max(f.staticSmemBytes(form), row.staticSmemBytes.value_or(0)),
                                               f.dynamicSmemBytes(form)});
  KernelGeometry g;
  const KernelLaunch& main = plan.mainLaunch();
  g.blocks = static_cast<long long>(main.grid.volume());
  g.residency = Residency{occ.blocksPerSm, occ.warpsPerBlock};
  g.slices = plan.kSlices;
  g.tileK = plan.tileK;
  const long long batch = std::max(1LL, at.batch);
  g.tileM = plan.tileM;
  g.tileN = plan.tileN;
  if (g.tileM <= 0 || g.tileN <= 0) {  // a family whose plan does not say: the output over the tiles
    const long long tiles = std::max(1LL, g.blocks / (g.slices * batch));
    g.tileM = std::max(1LL, (at.m + tiles - 1) / tiles);
    g.tileN = at.n;
  }
  if (main.oneWave) oneWaveGeometry(g, at, gpu.smCount);
  if (g.slices > 1 && !plan.slicesSummedOnChip) {
    // A workspace that holds every slice's partial tiles (thin) is written and read once; one
    // that holds only locks (cutlass's serial split-K) means each later slice reads and writes C.
    const double cBytes = 4.0 * double(at.m) * double(at.n) * double(batch);
    g.partialBytes = double(plan.workspaceBytes) >= g.slices * cBytes ? 2.0 * double(plan.workspaceBytes)
                                                                      : (g.slices - 1) * 2.0 * cBytes;
  }
  return g;
}

double rawMsOf(const Config& config, const KernelGeometry& g, const GpuSpec& gpu, const db::ProblemKey& problem) {
  return rawMs(problem, g, machineRatesOf(gpu, precisionClassOf(*config.family)));
}

double rawMsOf(const Config& config, const db::StoredResult& row, const GpuSpec& gpu, const db::ProblemKey& problem) {
  const auto g = geometryOf(config, row, gpu, problem);
  return g ? rawMsOf(config, *g, gpu, problem) : 0;
}


std::optional<CublasPrediction> predictCublas(const db::ProblemKey& asked, std::span<const Observation> measured,
                                              const MachineRates& rates) {
  CublasPrediction p;
  const double ratio = ratioNear(asked, measured, &p.anchor);
  if (!(ratio > 0)) return std::nullopt;
  p.ms = rooflineMs(asked, rates) * ratio;
  std::vector<db::ProblemKey> seen;
  for (const Observation& o : measured) {
    if (o.problem == p.anchor && !(p.anchorMs > 0)) p.anchorMs = o.measuredMs;
    if (std::find(seen.begin(), seen.end(), o.problem) == seen.end()) seen.push_back(o.problem);
  }
  p.problems = static_cast<int>(seen.size());
  return p;
}

std::vector<Observation> cublasObservations(const db::ResultStore& store, std::int64_t gpuId, const db::ProblemKey& like,
                                            const MachineRates& rates) {
  std::vector<Observation> out;
  auto add = [&](const db::ProblemKey& p, double ms) {
    if (ms > 0 && p.layout == like.layout && p.batch == like.batch) out.push_back({p, ms, rooflineMs(p, rates)});
  };
  // Only cuBLAS's own rows (verified, written where `tune --families` names cublas): the
  // baselines table is filled whatever the families, so reading it would make cuBLAS a candidate
  // for people who tuned without it.
  db::ResultFilter filter;
  filter.gpuId = gpuId;
  filter.family = std::string(db::kCublasFamily);
  filter.status = "ok";
  filter.layout = like.layout;
  filter.batch = like.batch;
  // cuBLAS's own call only: a cuBLASLt configuration's row is faster where it was searched, and
  // elsewhere cuBLAS's own call runs.
  for (const db::StoredResult& row : store.results(filter))
    if (row.instance() == db::cublasInstance(row.key.problem.layout)) add(row.key.problem, row.medianMs.value_or(0));
  return out;
}

}  // namespace gemmtune::serving
