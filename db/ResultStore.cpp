#include "ResultStore.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>

#include "Clock.hpp"
#include "gemmtune/Errors.hpp"
#include "ParamsJson.hpp"
#include "Quote.hpp"

#ifndef GEMMTUNE_VERSION
#define GEMMTUNE_VERSION "unknown"
#endif

namespace gemmtune::db {

namespace {

constexpr std::array<std::string_view, 9> kStatuses = {
    "ok", "rejected", "compile_error", "launch_error", "runtime_fault", "timeout", "worker_died", "wrong_result",
    "pruned"};

bool finiteNonNegative(const std::optional<double>& v) { return !v || (std::isfinite(*v) && *v >= 0); }
bool nonNegative(const std::optional<int>& v) { return !v || *v >= 0; }

}  // namespace

// --- records ---------------------------------------------------------------------------------

void ResultRecord::setStatus(std::string_view full) {
  auto colon = full.find(':');
  status = std::string(full.substr(0, colon));
  statusReason = colon == std::string_view::npos ? std::string() : std::string(full.substr(colon + 1));
}

std::string ResultRecord::fullStatus() const { return statusReason.empty() ? status : status + ":" + statusReason; }

void ResultRecord::setConfig(std::string familyName, std::string instance,
                             const std::vector<std::pair<std::string, int>>& namedValues) {
  family = std::move(familyName);
  key.instance = std::move(instance);
  nlohmann::json p = nlohmann::json::object();
  for (const auto& [name, value] : namedValues) p[name] = value;
  params = p.dump();
}

bool isFinalStatus(std::string_view status) {
  std::string_view kind = status.substr(0, status.find(':'));
  return kind != "worker_died" && kind != "pruned";
}

double gflopsOf(const ProblemKey& p, double medianMs) {
  return 2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k) *
         static_cast<double>(p.batch) / (medianMs * 1e6);
}

void validateResult(const ResultRecord& r) {
  auto fail = [&](std::string_view what) {
    throw DataError(fmt::format("result for {}: {}", quoteInput(r.instance()), what));
  };
  if (r.instance().empty()) fail("the instance name is empty");
  if (r.family.empty()) fail("the family is empty");
  if (std::string why = problemKeyProblem(r.key.problem); !why.empty()) fail(why);
  if (std::find(kStatuses.begin(), kStatuses.end(), r.status) == kStatuses.end())
    fail(fmt::format("unknown status '{}'", r.status));
  if (r.status == "ok" && (!r.medianMs || !(*r.medianMs > 0) || !std::isfinite(*r.medianMs)))
    fail("an ok result needs a positive, finite median time");
  for (const auto* v : {&r.medianMs, &r.minMs, &r.spread, &r.gflops, &r.maxError, &r.occupancy})
    if (!finiteNonNegative(*v)) fail("timing, GFLOP/s, error and occupancy must be finite and not negative");
  for (const auto* v : {&r.reps, &r.smClockMHz, &r.threadsPerBlock, &r.registers, &r.staticSmemBytes,
                        &r.dynamicSmemBytes, &r.stackFrameBytes, &r.spillStoreBytes, &r.spillLoadBytes})
    if (!nonNegative(*v)) fail("counts and sizes must not be negative");
  if (r.key.gpuFingerprint.empty() || r.key.sourceHash.empty() || r.key.nvrtcVersion.empty() || r.key.arch.empty())
    fail("the cache key needs the GPU fingerprint, source hash, NVRTC version and arch");
  if (!r.measuredAt.empty() && !isUtcTimestamp(r.measuredAt))
    fail(fmt::format("measured_at '{}' is not a UTC time stamp like 2025-01-31T12:00:00.000000Z", r.measuredAt));
  if (std::string why = paramsTextProblem(r.params); !why.empty()) fail("params: " + why);
}

std::string cublasInstance(std::string_view layout) { return fmt::format("{}_{}", kCublasFamily, layout); }

std::string cublasLtInstance(std::string_view layout, std::string_view algo) {
  return fmt::format("{}_{}", cublasInstance(layout), algo);
}

std::string_view cublasLtAlgoOf(std::string_view instance, std::string_view layout) {
  // "cublas_<layout>_lt…", written without a heap string: the library asks on every call.
  const auto take = [&](std::string_view part) {
    if (!instance.starts_with(part)) return false;
    instance.remove_prefix(part.size());
    return true;
  };
  if (take(kCublasFamily) && take("_") && take(layout) && take("_") && instance.starts_with(kCublasLtPrefix))
    return instance;
  return {};
}

bool isCublasRow(const ResultRecord& row) {
  return row.family == kCublasFamily && (row.instance() == cublasInstance(row.key.problem.layout) ||
                                         !cublasLtAlgoOf(row.instance(), row.key.problem.layout).empty());
}

}  // namespace gemmtune::db
