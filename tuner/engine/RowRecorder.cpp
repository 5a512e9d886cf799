#include "engine/RowRecorder.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

#include "gemmtune/Errors.hpp"
#include "NvrtcCompiler.hpp"
#include "PresentBuild.hpp"
#include "engine/EngineContext.hpp"
#include "engine/LaneGroup.hpp"

namespace gemmtune {

namespace {


double tflops(const GemmShape& s, double ms) { return ms > 0 ? s.flops() / (ms * 1e-3) / 1e12 : 0; }

Timed timedOf(const Candidate& c, double medianMs, bool partial, const db::ResultRecord& row) {
  return Timed{c.config.name(), baseName(c.config), c.config.family, medianMs, partial, row, c.config};
}

}  // namespace

db::CacheKey RowRecorder::keyFor(const Config& config, const std::string& sourceHash, const GemmShape& s) const {
  db::CacheKey k;
  k.gpuFingerprint = db::gpuFingerprint(context_.gpu);
  k.driverVersion = context_.driverVersion;
  k.nvrtcVersion = NvrtcCompiler::version();
  k.arch = context_.gpu.arch();
  k.compileOptions = compileOptionsOf(*config.family);
  k.sourceHash = sourceHash;
  k.instance = config.name();
  k.problem = db::problemKeyOf(s);
  return k;
}

db::ResultRecord RowRecorder::cublasRow(const GemmShape& shape, const CandidateResult& r, double medianMs,
                                        int cublasVersion, const std::string& ltAlgo) const {
  db::ResultRecord rec;
  rec.key.gpuFingerprint = db::gpuFingerprint(context_.gpu);
  rec.key.driverVersion = context_.driverVersion;
  rec.key.nvrtcVersion = NvrtcCompiler::version();  // no kernel compiled, but a row's key names the build
  rec.key.arch = context_.gpu.arch();
  rec.key.compileOptions = ltAlgo.empty() ? "CUBLAS_DEFAULT_MATH" : "CUBLAS_COMPUTE_32F";
  rec.key.sourceHash = fmt::format("cublas {}", cublasVersion);
  rec.key.instance =
      ltAlgo.empty() ? db::cublasInstance(shape.layout.text()) : db::cublasLtInstance(shape.layout.text(), ltAlgo);
  rec.key.problem = db::problemKeyOf(shape);
  rec.family = db::kCublasFamily;
  rec.params = "{}";
  rec.setStatus(r.status);
  rec.errorText = r.detail;
  if (r.maxError != 0 && std::isfinite(r.maxError)) rec.maxError = r.maxError;
  if (r.smClockMHz) rec.smClockMHz = r.smClockMHz;
  if (r.status == kStatusOk) {
    rec.medianMs = medianMs;
    rec.minMs = std::min(r.minMs, medianMs);
    rec.spread = r.spread;
    rec.reps = r.reps;
    rec.partial = r.partial;
  }
  return rec;
}

db::ResultRecord RowRecorder::rowFor(const Candidate& c, const std::string& srcHash, const GemmShape& shape) const {
  db::ResultRecord rec;
  rec.key = keyFor(c.config, srcHash, shape);
  rec.setConfig(c.config.family->name, c.config.name(), c.config.namedValues());
  rec.threadsPerBlock = c.threadsPerBlock;
  rec.dynamicSmemBytes = c.dynamicSmemBytes;
  rec.staticSmemBytes = c.staticSmemBytes;
  if (c.compiled && c.compiled->ok) {
    const auto& res = c.compiled->resources;
    rec.registers = res.registers;
    rec.stackFrameBytes = res.stackFrameBytes;
    rec.spillStoreBytes = res.spillStoreBytes;
    rec.spillLoadBytes = res.spillLoadBytes;
    rec.loweredName = joinLoweredNames(c.compiled->loweredNames);
  }
  if (c.occupancy) {
    rec.occupancy = c.occupancy->fraction;
    rec.limiter = c.occupancy->limiterNames();
  }
  return rec;
}

void RowRecorder::readStoredRows(const GemmShape& shape) {
  db::ResultFilter f;
  f.gpuId = context_.gpuId;
  f.m = shape.M;
  f.n = shape.N;
  f.k = shape.K;
  f.layout = shape.layout.text();  // rows of another batch differ in their key hash
  for (auto& r : context_.store.results(f)) {
    if (r.fullStatus() == "pruned:rank") storedRankPruned_.emplace(r.cacheKeyHash, r.errorText);
    if (db::isFinalStatus(r.status)) stored_.emplace(r.cacheKeyHash, std::move(r));
  }
}

const db::StoredResult* RowRecorder::storedRow(const Candidate& c, const std::string& srcHash,
                                               const GemmShape& shape) const {
  if (stored_.empty()) return nullptr;  // a fresh run keys nothing
  return storedRow(keyFor(c.config, srcHash, shape));
}

const db::StoredResult* RowRecorder::storedRow(const db::CacheKey& key) const {
  auto it = stored_.find(key.hash());
  return it != stored_.end() ? &it->second : nullptr;
}

// Whether `a` and `b` key the same GPU, driver, build, cuBLAS and problem: all but the instance
// (a cuBLASLt row's instance names its configuration, which a search may change).
static bool sameKeyButInstance(db::CacheKey a, const db::CacheKey& b) {
  a.instance = b.instance;
  return a.hash() == b.hash();
}

const db::StoredResult* RowRecorder::storedCublasLtRow(const db::CacheKey& like) const {
  const std::string baseline = db::cublasInstance(like.problem.layout);
  const db::StoredResult* best = nullptr;
  for (const auto& [hash, row] : stored_) {
    if (row.status != kStatusOk || !row.medianMs || !db::isCublasRow(row) || row.instance() == baseline) continue;
    if (sameKeyButInstance(row.key, like) && (!best || *row.medianMs < *best->medianMs)) best = &row;
  }
  return best;
}

std::vector<db::ResultRecord> RowRecorder::supersededCublasLtRows(const db::ResultRecord& kept) const {
  const db::ProblemKey& problem = kept.key.problem;
  db::ResultFilter f;
  f.gpuId = context_.gpuId;
  f.m = problem.m;
  f.n = problem.n;
  f.k = problem.k;
  f.layout = problem.layout;
  f.family = std::string(db::kCublasFamily);
  f.status = kStatusOk;
  std::vector<db::ResultRecord> out;
  for (const db::StoredResult& stored : context_.store.results(f)) {
    if (stored.instance() == kept.instance() || db::cublasLtAlgoOf(stored.instance(), problem.layout).empty())
      continue;
    if (!sameKeyButInstance(stored.key, kept.key)) continue;  // another batch, build, driver or cuBLAS
    // A new row, not the stored one edited: nothing of the old measurement may stay with it.
    db::ResultRecord row;
    row.key = stored.key;
    row.family = stored.family;
    row.params = stored.params;
    row.setStatus("pruned:superseded");
    row.errorText = fmt::format("a later search kept {} ({:.4f} ms) for this problem", kept.instance(),
                                kept.medianMs.value_or(0));
    out.push_back(std::move(row));
  }
  return out;
}

const std::string* RowRecorder::storedRankPruning(const Candidate& c, const std::string& srcHash,
                                                  const GemmShape& shape) const {
  auto it = storedRankPruned_.find(keyFor(c.config, srcHash, shape).hash());
  return it != storedRankPruned_.end() ? &it->second : nullptr;
}

void RowRecorder::recordUntimed(const Candidate& c, const std::string& srcHash, FamilyTurn& turn,
                                std::vector<db::ResultRecord>* batch) {
  ProgressState& progress = turn.size.progress;
  db::ResultRecord rec = rowFor(c, srcHash, turn.shape);
  const std::string status = c.status();
  ++progress.done;
  if (c.stage == CandidateStage::Pruned) ++progress.pruned;
  else ++progress.rejected;
  turn.outcome.statusCounts[statusClass(status)]++;
  const db::StoredResult* stored = storedRow(rec.key);
  if (stored && stored->fullStatus() == status) return;  // recorded so already
  rec.setStatus(status);
  rec.errorText = c.stage == CandidateStage::Compile && c.compiled ? c.compiled->log : c.reason;
  if (batch)
    batch->push_back(std::move(rec));
  else
    record(rec, lanes_.first().runId);  // measured on no GPU: the group's first run holds it
}

void RowRecorder::recordBatch(std::vector<db::ResultRecord>& batch) {
  if (batch.empty()) return;
  record(batch, lanes_.first().runId);  // measured on no GPU: the group's first run holds them
  batch.clear();
}

std::optional<double> RowRecorder::recordResumed(const db::StoredResult& stored, const Candidate& c,
                                                 FamilyTurn& turn) {
  ProgressState& progress = turn.size.progress;
  const std::string status = stored.fullStatus();
  ++turn.size.out.resumed;
  turn.outcome.statusCounts[statusClass(status)]++;
  if (stored.status == kStatusOk && stored.medianMs) {
    turn.size.timed.push_back(timedOf(c, *stored.medianMs, stored.partial, stored));
    return *stored.medianMs;
  }
  if (statusClass(status) == "rejected") ++progress.rejected;
  else if (status != kStatusOk) ++progress.failed;
  return std::nullopt;
}

std::optional<double> RowRecorder::recordTimed(db::ResultRecord rec, const CandidateResult& r, const Candidate& c,
                                               FamilyTurn& turn, std::int64_t runId) {
  ProgressState& progress = turn.size.progress;
  ++turn.size.out.timed;
  rec.setStatus(r.status);
  rec.errorText = r.detail;
  if (r.maxError != 0 && std::isfinite(r.maxError)) rec.maxError = r.maxError;
  if (r.smClockMHz) rec.smClockMHz = r.smClockMHz;
  std::optional<double> ms;
  if (r.status == kStatusOk) {
    rec.medianMs = r.medianMs;
    rec.minMs = r.minMs;
    rec.spread = r.spread;
    rec.reps = r.reps;
    rec.partial = r.partial;
    rec.cubin = c.compiled->cubin;
    turn.size.timed.push_back(timedOf(c, r.medianMs, r.partial, rec));
    ms = r.medianMs;
    if (progress.bestInstance.empty() || tflops(turn.shape, r.medianMs) > progress.bestTflops) {
      progress.bestTflops = tflops(turn.shape, r.medianMs);
      progress.bestInstance = c.config.name();
    }
  } else {
    ++progress.failed;
    spdlog::debug("{} at {}: {} {}", c.config.name(), turn.shape.str(), r.status, r.detail);
  }
  record(rec, runId);
  turn.outcome.statusCounts[statusClass(r.status)]++;
  return ms;
}

void RowRecorder::record(std::span<const db::ResultRecord> recs, std::int64_t runId) {
  try {
    context_.store.recordResults(runId, recs);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    const std::string what = recs.size() == 1 ? recs.front().instance() : fmt::format("{} candidates", recs.size());
    throw IoError(fmt::format("cannot record {} in the results database: {}", what, e.what()));
  }
}

}  // namespace gemmtune
