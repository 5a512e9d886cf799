#include "engine/FamilyScreen.hpp"

#include <algorithm>

#include "BasisShapes.hpp"
#include "CandidateFilter.hpp"
#include "FamilyRegistry.hpp"
#include "engine/EngineContext.hpp"
#include "engine/RowRecorder.hpp"

namespace gemmtune {

namespace {

std::optional<Config> classicConfig(const Family& f, const GemmShape& s) {
  auto c = FamilyRegistry::classic(f);
  if (c) c = formFor(*c, GemmProblem::packed(s));
  return c;
}

// Whether the search proposes `c` right after the classic configuration at `shape` (SearchPoint::seed).
bool isSeed(const Config& c, const GemmShape& shape) {
  return isSkinnyShape(shape) && c.family->isSkinnyTile(c.values);
}

}  // namespace

SpaceOptions spaceAt(const GemmShape& shape, const TuneOptions& options) {
  SpaceOptions so;
  so.size = shape;
  so.filter = options.filter;
  return so;
}

bool ScreenedFamily::hasClassicPoint() const {
  return std::any_of(indexOf.begin(), indexOf.end(), [&](size_t i) { return isClassic(candidates[i].config); });
}

const std::string& FamilyScreen::sourceHashOf(const Family& family) {
  auto it = sourceHashes_.find(&family);
  if (it == sourceHashes_.end()) it = sourceHashes_.emplace(&family, context_.compiler.sourceHash(family)).first;
  return it->second;
}

ScreenedFamily FamilyScreen::screen(FamilyTurn& turn) {
  ScreenedFamily s;
  s.classic = classicConfig(turn.family, turn.shape);
  if (s.classic) turn.outcome.classicInstance = s.classic->name();
  s.candidates = screenSpace(turn.family, context_.gpu, spaceAt(turn.shape, context_.options));
  admit(turn, s);
  return s;
}

ScreenedFamily FamilyScreen::screenGiven(FamilyTurn& turn, const std::vector<Config>& configs) {
  ScreenedFamily s;
  for (const Config& c : configs) s.candidates.push_back(checkBeforeCompile(c, context_.gpu, turn.shape));
  admit(turn, s);
  return s;
}

void FamilyScreen::admit(FamilyTurn& turn, ScreenedFamily& s) {
  s.sourceHashes.assign(s.candidates.size(), sourceHashOf(turn.family));
  turn.size.progress.total += static_cast<int>(s.candidates.size());

  // Rejected before compiling: recorded whatever the strategy does, in one transaction (a row
  // each in its own was most of a simulated 50-shape workload's wall time: 3 000 rows a shape for
  // thin). The rest are the strategy's points.
  std::vector<db::ResultRecord> batch;
  for (size_t i = 0; i < s.candidates.size(); ++i) {
    const Candidate& c = s.candidates[i];
    if (!c.accepted()) {
      rows_.recordUntimed(c, s.sourceHashes[i], turn, &batch);
      continue;
    }
    SearchPoint p;
    p.base = baseName(c.config);
    p.classic = s.isClassic(c.config);
    p.seed = isSeed(c.config, turn.shape);
    if (c.grid) p.blocks = static_cast<long long>(c.grid->x) * c.grid->y * c.grid->z;
    p.warpsPerBlock = (c.threadsPerBlock + 31) / 32;
    s.indexOf.push_back(i);
    s.points.push_back(std::move(p));
  }
  rows_.recordBatch(batch);
}

RankPruning::RankPruning(const ScreenedFamily& screened, const RowRecorder& rows, const SearchStrategy& strategy,
                         const TuneOptions& options, const GemmShape& shape)
    : screened_(screened), rows_(rows), strategy_(strategy), shape_(shape) {
  // An earlier run of this strategy that timed at least --carry of this family here and ranked
  // the rest out: its choices stand (the rows keep their reasons). The ranking is made from the
  // sizes below, whose finalists that run re-timed after ranking; ranked again from the re-timed
  // figures, near-equals at the cut swap places and the same command would time a few more each
  // time (6 at 8192 of a warm 1024..8192 tune, measured on an H100). Asked for a --carry above
  // what was timed, exhaustively or by another strategy, the rest are ranked afresh. The seeds are
  // timed on top of --carry, so they do not count (the classic configuration still does, as it
  // always has: a warm main job resumes exactly what it did before).
  int storedOk = 0;
  for (size_t point = 0; point < screened.indexOf.size(); ++point) {
    const Candidate& c = screened.candidateOf(point);
    if (isSeed(c.config, shape)) continue;
    const db::StoredResult* stored = rows.storedRow(c, screened.sourceHashOf(point), shape);
    if (stored) storedOk += stored->status == kStatusOk;
  }
  stands_ = options.resume && options.carry > 0 && storedOk >= options.carry;
}

const std::string* RankPruning::keptReason(size_t point) const {
  const Candidate& c = screened_.candidateOf(point);
  const std::string& srcHash = screened_.sourceHashOf(point);
  // A seed is always timed: a run from before seeds existed may have ranked it out.
  if (!stands_ || screened_.isClassic(c.config) || isSeed(c.config, shape_) || rows_.hasStoredRow(c, srcHash, shape_))
    return nullptr;
  const std::string* reason = rows_.storedRankPruning(c, srcHash, shape_);
  return reason && strategy_.wroteNotTimedReason(*reason) ? reason : nullptr;
}

}  // namespace gemmtune
