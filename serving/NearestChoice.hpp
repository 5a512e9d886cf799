// NearestChoice: serving's side of the family model (model/FamilyModel.hpp) — the GPU's rates, a
// configuration's launch geometry at a problem (its plan and occupancy), the configurations one
// program runs (every SPLITK of the family's domain: a launch-only parameter), and cuBLAS's time
// predicted from its measured problems. The lookup (Lookup::pickNearest) and bench/model_error
// both predict through it, so the error the bench reports is the lookup's.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "CacheKey.hpp"
#include "Family.hpp"
#include "FamilyModel.hpp"
#include "ResultStore.hpp"
#include "gemmtune/GpuSpec.hpp"

namespace gemmtune::serving {

// Peak from serving::peakRate, bandwidth from the memory clock and bus width; 0 where unknown.
MachineRates machineRatesOf(const GpuSpec& gpu, PrecisionClass precision = PrecisionClass::strict);

// `config`'s launch at `problem` (in the configuration's own layout; guarded when the unguarded
// form cannot run it), with the residency the row's registers allow; nullopt when no form runs it.
std::optional<KernelGeometry> geometryOf(const Config& config, const db::StoredResult& row, const GpuSpec& gpu,
                                         const db::ProblemKey& problem);

// The model's uncalibrated time of `config` (from `row`) at `problem`; 0 when it cannot run there.
double rawMsOf(const Config& config, const db::StoredResult& row, const GpuSpec& gpu, const db::ProblemKey& problem);
// The same from a geometry already computed (geometryOf) for `problem`.
double rawMsOf(const Config& config, const KernelGeometry& g, const GpuSpec& gpu, const db::ProblemKey& problem);


// cuBLAS's predicted time at `asked` from its measured problems (`measured`: rawMs = rooflineMs).
struct CublasPrediction {
  double ms = 0;
  db::ProblemKey anchor;  // the measured problem it was scaled from
  double anchorMs = 0;    // cuBLAS's measured time there
  int problems = 0;       // measured problems it had
};
std::optional<CublasPrediction> predictCublas(const db::ProblemKey& asked, std::span<const Observation> measured,
                                              const MachineRates& rates);

// cuBLAS's measured times of this GPU, layout and batch, from its "cublas" rows (status ok; the
// baselines table exists whatever --families said), as observations.
std::vector<Observation> cublasObservations(const db::ResultStore& store, std::int64_t gpuId, const db::ProblemKey& like,
                                            const MachineRates& rates);

}  // namespace gemmtune::serving
