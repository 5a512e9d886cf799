#include "engine/BasisRun.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "BasisShapes.hpp"
#include "CandidateFilter.hpp"
#include "FamilyPlans.hpp"
#include "GemmProblem.hpp"
#include "engine/FinalistRetimer.hpp"
#include "engine/RowRecorder.hpp"
#include "engine/SizeRuns.hpp"

namespace gemmtune {

namespace {

// A shape begins only with this much of the basis's time left: setting its problem on the
// workers, its cuBLAS baseline (0.6 s of timing) and re-timing its finalists (five rounds) come
// before and after its candidates. Below it the shape is recorded, not timed; a warm rerun whose
// basis is all stored needs no time at all.
constexpr double kMinShapeSec = 2.0;
// Of a shape's share, what setting its problem (with the cuBLAS baseline) and its families'
// turns may take: the rest is for re-timing each family's best against cuBLAS (five rounds of
// about 25 ms each, as much as a first timing of five candidates for seven families).
constexpr double kTurnsShare = 0.7;
// Re-timed per family at a basis shape: its best, interleaved with cuBLAS (the comparison the
// lookup's margin rests on); ordering near-equals is not worth the time there.
constexpr size_t kRetimedPerFamily = 1;

std::vector<Layout> layoutsOf(const std::vector<GemmShape>& order) {
  std::vector<Layout> out;
  for (const GemmShape& s : order)
    if (std::find(out.begin(), out.end(), s.layout) == out.end()) out.push_back(s.layout);
  return out;
}

// `config` unless `into` holds its compiled program already (Config::sameProgram: template
// arguments, form and layout; launch-only values share it).
void addProgramOnce(std::vector<Config>& into, Config config) {
  if (std::none_of(into.begin(), into.end(), [&](const Config& c) { return c.sameProgram(config); }))
    into.push_back(std::move(config));
}

// `family`'s skinnyTiles in `layout`, guarded, those a --params domain leaves out skipped
// (launch-only values aside: every one is timed). Guarded at every shape: the skinny shapes a
// program has are rarely multiples of a tile, and the lookup counts a guarded form it never
// measured twice (kUnmeasuredGuardedPenalty). Measured on an H100: thin's 8x32 tile timed
// unguarded at 16x4096x4096 (1.75x cuBLAS) lost 10x3901x3801 to a 32x16 tile timed guarded, 0.65x.
std::vector<Config> skinnyTilesOf(const Family& family, const Layout& layout) {
  std::vector<Config> out;
  for (const std::vector<int>& values : family.skinnyTiles) {
    bool inDomains = values.size() == family.params.size();
    for (size_t p = 0; inDomains && p < values.size(); ++p) {
      const ParamSpec& spec = family.params[p];
      inDomains = spec.launchOnly || std::find(spec.domain.begin(), spec.domain.end(), values[p]) != spec.domain.end();
    }
    if (!inDomains) continue;
    Config c;
    c.family = &family;
    c.values = values;
    c.guarded = true;
    c.layout = layout;
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

std::vector<Config> atEveryLaunchValue(const Config& config, const GemmShape& shape, int smCount) {
  std::vector<Config> out = config.launchVariants();
  const std::vector<ParamSpec>& params = config.family->params;
  Config single = out.front();  // every launch-only parameter at its least value: one slice
  if (out.size() < 2 || config.violated()) return out;
  const LaunchPlan plan = planLaunch(single, GemmProblem::packed(shape));
  if (!plan.runnable() || plan.launches.empty()) return out;
  const double blocks = static_cast<double>(std::max<unsigned long long>(1, plan.mainLaunch().grid.volume()));
  const double wanted = std::log2(std::max(1.0, smCount / blocks));
  auto distance = [&](const Config& c) {
    double slices = 1;
    for (size_t p = 0; p < params.size(); ++p)
      if (params[p].launchOnly) slices *= std::max(1, c.values[p]);
    return std::abs(std::log2(slices) - wanted);
  };
  std::stable_sort(out.begin(), out.end(), [&](const Config& a, const Config& b) { return distance(a) < distance(b); });
  return out;
}

std::vector<Config> basisCandidates(const Family& family, const std::vector<Config>& finalists, const GemmShape& shape,
                                    int smCount) {
  // Each program once, in the form it runs `shape` in: a skinny tile guarded, a finalist as the
  // shape needs (a finalist that is a skinny tile's program is that tile).
  std::vector<Config> programs;
  if (isSkinnyShape(shape)) programs = skinnyTilesOf(family, shape.layout);
  for (const Config& c : finalists)
    if (std::none_of(programs.begin(), programs.end(), [&](const Config& p) { return p.programKey() == c.programKey(); }))
      programs.push_back(basisFormFor(c, shape));
  // Breadth first: each program at its likeliest launch value before any at its second, so that a
  // short budget measures more programs. The lookup prices other slice counts from the geometry,
  // but a pick with more slices than its program ran at the anchor never faces cuBLAS.
  std::vector<std::vector<Config>> variants;
  for (const Config& c : programs) variants.push_back(atEveryLaunchValue(c, shape, smCount));
  std::vector<Config> out;
  for (size_t rank = 0;; ++rank) {
    const size_t before = out.size();
    for (const std::vector<Config>& v : variants)
      if (rank < v.size()) out.push_back(v[rank]);
    if (out.size() == before) return out;
  }
}

Config basisFormFor(Config config, const GemmShape& shape) {
  if (!config.violated()) return formFor(std::move(config), GemmProblem::packed(shape));
  config.layout = shape.layout;
  config.guarded = true;
  return config;
}

std::vector<Config> BasisRun::candidatesOf(const Family& family, const Layout& layout,
                                           const std::vector<GemmShape>& order) const {
  // Each size's finalists, fastest first; taken rank by rank over the sizes, so that every size's
  // best comes before any size's second when the budget is short.
  std::vector<std::vector<Timed*>> bySize;
  for (const GemmShape& s : order)
    if (SizeRun* run = sizes_.find(s); run && s.layout == layout)
      bySize.push_back(finalists_.finalistsOf(family.name, run->timed));
  std::vector<Config> out;
  for (size_t rank = 0;; ++rank) {
    bool more = false;
    for (const std::vector<Timed*>& finalists : bySize) {
      if (rank >= finalists.size()) continue;
      more = true;
      Config config = finalists[rank]->config;
      config.guarded = false;
      addProgramOnce(out, std::move(config));
    }
    if (!more) return out;
  }
}

BasisRun::Lists BasisRun::candidatesIn(const Layout& layout, const std::vector<GemmShape>& order) const {
  Lists out;
  for (const Family* family : context_.options.families) {
    std::vector<Config> configs = candidatesOf(*family, layout, order);
    if (!configs.empty()) out.emplace_back(family, std::move(configs));
  }
  return out;
}

void BasisRun::prefetch(const Family& family, const std::vector<GemmShape>& order) {
  // As prefetchFirstSizes: without a disk cache a finished prefetch would be compiled twice.
  if (context_.compiler.cache().dir().empty()) return;
  std::vector<Config> configs;
  for (const Layout& layout : layoutsOf(order)) {
    const std::vector<Config> mine = candidatesOf(family, layout, order);
    if (mine.empty()) continue;
    for (const GemmShape& shape : basisShapesFor({layout}, order))
      for (Config& formed : basisCandidates(family, mine, shape, context_.gpu.smCount))
        addProgramOnce(configs, std::move(formed));
  }
  context_.compiler.prefetch(configs, context_.gpu.arch());
}

BasisOutcome BasisRun::run(const std::vector<GemmShape>& order, double sizesSeconds, const Turn& turn) {
  const auto start = EngineClock::now();
  const double share = std::max(0.0, context_.options.basisShare);
  BasisOutcome out;
  budgetSec_ = share >= 1 ? std::numeric_limits<double>::infinity() : sizesSeconds * share / (1 - share);
  out.budgetSeconds = budgetSec_;
  reason_ = fmt::format("the basis's time was spent ({:.0f} % of the run: {:.1f} s)", 100 * share, budgetSec_);

  std::vector<std::pair<GemmShape, Lists>> shapes;  // the shapes with something to time, in priority order
  std::vector<std::pair<Layout, Lists>> byLayout;
  for (const Layout& layout : layoutsOf(order)) byLayout.emplace_back(layout, candidatesIn(layout, order));
  for (const GemmShape& shape : basisShapesFor(layoutsOf(order), order))
    for (const auto& [layout, lists] : byLayout)
      if (layout == shape.layout && !lists.empty()) shapes.emplace_back(shape, lists);

  for (size_t i = 0; i < shapes.size() && !context_.stopped(); ++i) {
    // An even share of what is left; when that is too short for a shape, the first ones get
    // what a shape needs and the rest are recorded untimed.
    const double left = budgetSec_ - secondsSince(start);
    double shapeSec = left / static_cast<double>(shapes.size() - i);
    if (shapeSec < kMinShapeSec) shapeSec = left >= kMinShapeSec ? kMinShapeSec : 0;
    const bool spent = shapeSec <= 0;
    ShapeOutcome done = runShape(shapes[i].first, shapes[i].second, shapeSec, spent, turn);
    if (done.leftUntimed) out.skipped.push_back(shapes[i].first.str());
    out.shapes.push_back(std::move(done.outcome));
  }
  out.seconds = secondsSince(start);
  if (!out.skipped.empty())
    spdlog::info("basis: {} of {} shape(s) not timed, {}: {}", out.skipped.size(), shapes.size(), reason_,
                 fmt::join(out.skipped, ", "));
  return out;
}

BasisRun::ShapeOutcome BasisRun::runShape(const GemmShape& shape, const Lists& lists, double shapeSec, bool spent,
                                           const Turn& turn) {
  const auto shapeStart = EngineClock::now();
  SizeRun& run = sizes_.open(shape);
  run.progress.kind = "basis";
  run.retimedPerFamily = kRetimedPerFamily;
  Lists formed;
  for (const auto& [family, finalists] : lists)
    formed.emplace_back(family, basisCandidates(*family, finalists, shape, context_.gpu.smCount));
  // A shape whose every candidate is stored (a warm rerun) sets no problem on the GPUs.
  const bool needed = needsTiming(shape, formed);
  bool prepared = false;
  if (!spent && needed) {
    sizes_.use(shape);
    prepared = true;
  }
  const double turnsSec = std::isfinite(shapeSec) ? kTurnsShare * shapeSec : 0;  // infinite: no deadline
  const auto turnsEnd = shapeStart + std::chrono::duration_cast<EngineClock::duration>(std::chrono::duration<double>(turnsSec));
  size_t candidatesLeft = 0;
  for (const auto& [family, configs] : formed) candidatesLeft += configs.size();
  for (const auto& [family, configs] : formed) {
    if (context_.stopped()) break;
    const auto now = EngineClock::now();
    // Each family a share of what is left of the turns' time as large as its part of the
    // candidates left (split-K families list each program at every slice count); none once spent.
    if (!std::isfinite(shapeSec)) {
      run.deadline.reset();
    } else {
      const double part = static_cast<double>(configs.size()) / static_cast<double>(std::max<size_t>(1, candidatesLeft));
      run.deadline = spent || turnsEnd <= now ? now : now + std::chrono::duration_cast<EngineClock::duration>((turnsEnd - now) * part);
    }
    run.deadlineReason = reason_;
    candidatesLeft -= configs.size();
    turn(*family, run, configs);
  }
  run.deadline.reset();
  // Spent: untimed where a candidate has no stored row, or the finalists were never re-timed
  // (an earlier run stopped before its rounds); a warm rerun's basis has neither.
  const bool rounds = finalists_.needsRounds(run);
  const bool retime = !context_.stopped() && !spent && (prepared || rounds);
  if (retime) sizes_.use(shape);  // the finalists are re-timed there
  return {sizes_.finish(run, retime), spent && (needed || rounds)};
}

bool BasisRun::needsTiming(const GemmShape& shape, const Lists& lists) const {
  for (const auto& [family, configs] : lists) {
    const std::string sourceHash = context_.compiler.sourceHash(*family);  // hashes the template: once
    for (const Config& c : configs) {
      const Candidate candidate = checkBeforeCompile(c, context_.gpu, shape);
      if (candidate.accepted() && !rows_.hasStoredRow(candidate, sourceHash, shape)) return true;
    }
  }
  return false;
}

}  // namespace gemmtune
