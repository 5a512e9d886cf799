// Lookup's answer for a size with no valid row of its own: the family model's fastest
// configuration over every measured size (at its best SPLITK), or cuBLAS where cuBLAS is predicted
// faster beyond the policy's margin. See Lookup.hpp for the rule, model/FamilyModel.hpp for the model.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "CompileResult.hpp"
#include "FamilyRegistry.hpp"
#include "Lookup.hpp"
#include "NearestChoice.hpp"
#include "SizeDistance.hpp"

namespace gemmtune::serving {

namespace {

// Bounds on a cold nearest lookup's work: at most this many measured sizes, nearest first, each
// offering at most this many of its fastest valid rows, and every family's fastest (a few hundred
// candidates in all). A family that is never fastest where it was measured can be fastest
// elsewhere: on an H200, streamk ran 0.96x cuBLAS at 1024³, behind eight rows of
// cutlass and clusterk, and 0.95-1.02x at mid-size shapes where their picks ran 0.69-0.71x.
constexpr std::size_t kNearestSizes = 32;
constexpr std::size_t kRowsPerSize = 8;
// Only programs anchored (their measured row nearest the asked size) within this much of the
// nearest anchor compete: a row's calibration says little far from where it was measured. On the
// H100's main-job database, a warppipe tile anchored at 4096x4096x32 (small K, where it beat
// cuBLAS 1.5x) was chosen for 1619x1367x1092 and ran at 0.55x; with this bound (0.5: a factor of
// about 1.4 in output area) it competes only where no row was measured nearer.
constexpr double kAnchorSlack = 0.5;
// A guarded form never measured (its row ran unguarded) counts this many times its predicted
// time: guarded forms ran 1.4-1.8x slower than their unguarded rows on an H100 (partial tiles,
// bounds checks), and a wrong pick costs more than a missed win.
constexpr double kUnmeasuredGuardedPenalty = 2.0;
// A launch variant with more K slices than any row of its program was measured with counts this
// many times its predicted time (and more than its rows at the anchor size never wins over cuBLAS:
// answerNearest): on an H100, cutlass 64×128 rows measured unsliced at 1024³ were picked with 2–8
// slices at mid-size shapes, predicted 1.25× faster than cuBLAS, and ran at 0.73–0.86× (the model
// had no term for a slice's pipeline fill, and hid the reduction under the arithmetic; both are now
// in it, the fill as FamilyModel's kBlockFixedK, and this factor was not fitted again after).
// Fewer slices than measured cost less of both: no penalty.
constexpr double kMoreSlicesPenalty = 1.5;
// K slices shorter than this many k tiles (the plan's tileK; both splitting families give each
// slice whole tiles) are never offered: a slice that short spends its time filling the pipeline and in the
// reduction. On an H100 the main job's cutlass 64×256 row with 8 slices (measured at a long K)
// served 9×1592×45 and 29×1848×24 at 0.37–0.40× cuBLAS.
constexpr long long kMinSliceTiles = 4;

// Whether a launch of geometry `g` cuts K into slices shorter than kMinSliceTiles k tiles.
bool slicesTooShort(const KernelGeometry& g, long long k) {
  if (g.slices <= 1 || g.tileK <= 0) return false;
  const long long tiles = (k + g.tileK - 1) / g.tileK;
  return (tiles + g.slices - 1) / g.slices < kMinSliceTiles;
}

// `measured` first (it wins ties), then each other launch variant of its program that runs at
// `asked` (guarded where the unguarded form cannot).
std::vector<Config> runnableVariants(const Config& measured, const db::StoredResult& row, const GpuSpec& gpu,
                                     const ProblemKey& asked) {
  std::vector<Config> variants{measured};
  for (Config v : measured.launchVariants()) {
    if (v == measured || v.violated()) continue;
    if (launchProblem(v, row, gpu, asked)) {
      v.guarded = true;  // an unguarded split that cannot run here may run guarded
      if (launchProblem(v, row, gpu, asked)) continue;
    }
    variants.push_back(std::move(v));
  }
  return variants;
}

// `sizes` nearest `asked` first (ties: the larger, then by M, N, K), at most kNearestSizes.
void nearestFirst(std::vector<ProblemKey>& sizes, const ProblemKey& asked) {
  std::sort(sizes.begin(), sizes.end(), [&](const ProblemKey& a, const ProblemKey& b) {
    double da = sizeDistance(asked, a), db = sizeDistance(asked, b);
    if (da != db) return da < db;
    double va = static_cast<double>(a.m) * a.n * a.k, vb = static_cast<double>(b.m) * b.n * b.k;
    if (va != vb) return va > vb;
    return std::tie(a.m, a.n, a.k) < std::tie(b.m, b.n, b.k);
  });
  if (sizes.size() > kNearestSizes) sizes.resize(kNearestSizes);
}

}  // namespace

std::set<std::string> Lookup::competingPrograms(const std::vector<ProblemKey>& sizes,
                                                const std::vector<std::vector<Candidate>>& rowsBySize,
                                                const GpuSpec& gpu) {
  std::set<std::string> out;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    std::size_t taken = 0;
    std::set<std::string> familiesHere;
    for (const Candidate& c : rowsBySize[i]) {
      if (c.row->family == kCublasFamily) continue;
      if (taken >= kRowsPerSize && familiesHere.count(c.row->family)) continue;
      const auto g = geometryOf(c.config, *c.row, gpu, sizes[i]);
      if (!g || !(rawMsOf(c.config, *g, gpu, sizes[i]) > 0) || !(c.row->medianMs.value_or(0) > 0)) continue;
      ++taken;
      familiesHere.insert(c.row->family);
      out.insert(c.config.programKey());
    }
  }
  return out;
}

// The most K slices a program was measured with anywhere lifts kMoreSlicesPenalty; at its anchor
// (where its calibration comes from) it decides whether the pick may face cuBLAS. On an H100,
// cutlass tiles anchored unsliced and measured split elsewhere ran at 0.86-0.94x cuBLAS with 2-4
// slices, 0.73-0.87x without; thin's 8x32, measured unsliced at 16x4096x4096 and with 16 slices at
// 16x16x2048, ran 3.8x slower than predicted with 16 slices at 17x3605x3312, 0.51x.
Lookup::NearestPick Lookup::pickNearest(Reads& reads) {
  const ProblemKey& asked = reads.asked;
  auto sizes = store_.measuredSizes(reads.filter);  // it names no size: every measured one
  std::erase(sizes, reads.rowsOf);                  // already read as the exact candidate
  nearestFirst(sizes, asked);

  struct Offered {
    Candidate candidate;  // the row, in the form that runs the asked size
    ProblemKey at;
    Observation observation;
  };
  NearestPick pick;
  std::vector<Offered> offered;
  std::map<std::string, std::vector<Observation>> byProgram, byFamily;
  // The most K slices a row of a program was measured with, anywhere and per size (see above).
  std::map<std::string, int> mostSlices;
  std::map<std::pair<std::string, ProblemKey>, int> mostSlicesAt;
  std::vector<std::vector<Candidate>> rowsBySize;
  for (const ProblemKey& size : sizes) rowsBySize.push_back(validAt(reads, size, false));
  const std::set<std::string> competing = competingPrograms(sizes, rowsBySize, reads.gpu);
  // Every row of a competing program is evidence of it, and may anchor it: calibrated only from
  // the sizes where it was among the fastest, a program looks faster than its other rows say.
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const ProblemKey& size = sizes[i];
    std::size_t taken = 0;
    for (const Candidate& c : rowsBySize[i]) {
      if (c.row->family == kCublasFamily) continue;  // cuBLAS is weighed apart
      const std::string program = c.config.programKey();
      if (!competing.count(program)) continue;
      const auto g = geometryOf(c.config, *c.row, reads.gpu, size);
      const double raw = g ? rawMsOf(c.config, *g, reads.gpu, size) : 0;
      const double ms = c.row->medianMs.value_or(0);
      if (!(raw > 0) || !(ms > 0)) continue;
      ++taken;
      offered.push_back({c, size, {size, ms, raw}});
      byProgram[program].push_back(offered.back().observation);
      mostSlices[program] = std::max(mostSlices[program], g->slices);
      int& mostThere = mostSlicesAt[{program, size}];
      mostThere = std::max(mostThere, g->slices);
      byFamily[c.config.family->name].push_back(offered.back().observation);
    }
    pick.offered += static_cast<int>(taken);
    if (taken > 0) ++pick.shapes;
  }
  pick.programs = static_cast<int>(byProgram.size());

  // One candidate per program: its row nearest the asked size, at each of its launch variants.
  std::map<std::string, const Offered*> anchors;
  for (const Offered& o : offered) {
    const Offered*& a = anchors[o.candidate.config.programKey()];
    if (!a || sizeDistance(asked, o.at) < sizeDistance(asked, a->at)) a = &o;
  }
  double nearestAnchor = std::numeric_limits<double>::infinity();
  for (const auto& [program, anchor] : anchors) nearestAnchor = std::min(nearestAnchor, sizeDistance(asked, anchor->at));
  for (const auto& [program, anchor] : anchors) {
    if (sizeDistance(asked, anchor->at) > nearestAnchor + kAnchorSlack) continue;
    const Config& measured = anchor->candidate.config;
    const double ratio = calibrationRatio(asked, byProgram[program], byFamily[measured.family->name]);
    if (!(ratio > 0)) continue;
    const int mostSlicesThere = mostSlicesAt[{program, anchor->at}];
    for (const Config& v : runnableVariants(measured, *anchor->candidate.row, reads.gpu, asked)) {
      const auto g = geometryOf(v, *anchor->candidate.row, reads.gpu, asked);
      if (!g || slicesTooShort(*g, asked.k)) continue;
      const bool unmeasuredForm = v.guarded && !anchor->candidate.row->instance().ends_with("_guarded");
      const double formPenalty = (unmeasuredForm ? kUnmeasuredGuardedPenalty : 1.0) *
                                 (g->slices > mostSlices[program] ? kMoreSlicesPenalty : 1.0);
      const double ms = rawMsOf(v, *g, reads.gpu, asked) * ratio;
      if (!(ms > 0)) continue;
      if (!pick.candidate || ms * formPenalty < pick.scoreMs) {
        pick.candidate = Candidate{v, anchor->candidate.row};
        pick.at = anchor->at;
        pick.predictedMs = ms;
        pick.scoreMs = ms * formPenalty;
        pick.moreSlices = g->slices > mostSlicesThere;
      }
    }
  }
  return pick;
}

LookupResult Lookup::answerNearest(const Reads& reads, const NearestPick& pick, const std::string& family) const {
  const ProblemKey& asked = reads.asked;
  LookupResult out = answer(reads, *pick.candidate, MatchQuality::nearest_size, pick.at);
  // Only a launch-only parameter differs from the row's (another SPLITK): its binary still runs.
  if (out.cubin.empty() && out.instance != out.measuredInstance) {
    const Config rowConfig = FamilyRegistry::builtin().parseName(pick.candidate->row->instance());
    if (rowConfig.sameProgram(pick.candidate->config)) {
      out.cubin = store_.cubinOf(pick.candidate->row->id);
      out.loweredNames = splitLoweredNames(pick.candidate->row->loweredName);
    }
  }
  out.predictedMs = pick.predictedMs;
  const std::string ours =
      fmt::format("fastest predicted here ({} at {:.4g} ms by the family model, from {:.4g} ms at {}x{}x{}; best of {} "
                  "programs in {} rows of {} tuned sizes{})",
                  out.instance, out.predictedMs, out.medianMs, pick.at.m, pick.at.n, pick.at.k, pick.programs,
                  pick.offered, pick.shapes,
                  pick.scoreMs > pick.predictedMs ? "; counted slower: a guarded form, or more K slices, than measured" : "");
  if (!policy_.cublas || !family.empty()) {
    out.reason = ours;
    return out;
  }
  const MachineRates rates = machineRatesOf(reads.gpu);
  const auto cublas = predictCublas(asked, cublasObservations(store_, reads.gpuId, asked, rates), rates);
  if (!cublas) {
    out.reason = ours + "; cuBLAS not measured in this layout and batch";
    return out;
  }
  const std::string theirs = fmt::format("cuBLAS predicted {:.4g} ms (from its time at {}x{}x{} by the roofline)",
                                         cublas->ms, cublas->anchor.m, cublas->anchor.n, cublas->anchor.k);
  const bool faster = pick.scoreMs * policy_.cublasMargin <= cublas->ms;
  if (faster && !pick.moreSlices) {
    out.reason = fmt::format("{}; {}: ours is faster by the {:.2f} margin", ours, theirs, policy_.cublasMargin);
    return out;
  }
  LookupResult c;
  c.quality = MatchQuality::nearest_size;
  c.cublas = true;
  c.instance = cublasInstance(asked.layout);
  c.measuredInstance = c.instance;
  c.measuredProblem = cublas->anchor;
  c.distance = sizeDistance(asked, cublas->anchor);
  c.cublasGflops = store_.baselineGflops(reads.gpuId, cublas->anchor);
  c.medianMs = cublas->anchorMs;
  c.gflops = gflopsOf(cublas->anchor, cublas->anchorMs);
  c.predictedMs = cublas->ms;
  // The model's guess for a slice count a program never ran is its least reliable: measured on an
  // H100, thin's 8x32 and 32x16 tiles measured unsliced, served with 2-16 slices where they were
  // predicted 2.1-2.4x faster than cuBLAS, ran at 0.51-0.78x. cuBLAS runs it even where another
  // candidate would beat cuBLAS: facing cuBLAS with the best at measured slice counts and running
  // the pick was tried (scored offline on that main job: 1.05x against 1.07x, one shape at 0.48x);
  // running that candidate instead was not measured.
  c.reason = faster ? fmt::format("{}; {}: ours runs more K slices than its program ran at {}x{}x{}, cuBLAS runs it",
                                  theirs, ours, pick.at.m, pick.at.n, pick.at.k)
                    : fmt::format("{}; {}: not faster by the {:.2f} margin, cuBLAS runs it", theirs, ours,
                                  policy_.cublasMargin);
  return c;
}

}  // namespace gemmtune::serving
