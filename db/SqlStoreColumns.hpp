// SqlStore's result rows: the results table's columns and how a ResultRecord is bound to a
// statement and read back from one, plus the parameter binder every write uses. Part of
// SqlStoreImpl.hpp (included only by the files that instantiate SqlStore).
#pragma once

#include <fmt/format.h>

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "Clock.hpp"
#include "SqlStore.hpp"

namespace gemmtune::db::sqlstore {

// The results columns written from a ResultRecord, in bindResult()/readResult() order.
inline constexpr std::array<std::string_view, 38> kResultColumns = {
    "family", "instance", "params", "m", "n", "k", "layout", "batch", "beta_class", "status", "status_reason",
    "error_text", "median_ms", "min_ms", "spread", "reps", "partial", "gflops", "max_error", "sm_clock_mhz",
    "threads_per_block", "registers", "static_smem_bytes", "dynamic_smem_bytes", "stack_frame_bytes",
    "spill_store_bytes", "spill_load_bytes", "occupancy", "limiter", "arch", "compile_options", "source_hash",
    "driver_version", "nvrtc_version", "method_version", "lowered_name", "cubin", "measured_at"};

inline std::string joined(std::string_view prefix, bool cubin) {
  std::string out;
  for (auto c : kResultColumns) {
    if (!out.empty()) out += ", ";
    out += (c == "cubin" && !cubin) ? std::string("NULL") : fmt::format("{}{}", prefix, c);
  }
  return out;
}

inline std::string placeholders(std::size_t count) {
  std::string out;
  for (std::size_t i = 0; i < count; ++i) out += i ? ", ?" : "?";
  return out;
}

// Binds consecutive parameters without spelling out their indexes.
template <class St>
class ParamBinder {
 public:
  ParamBinder(St& st, int first) : st_(st), next_(first) {}
  template <class T>
  ParamBinder& operator()(const T& value) {
    st_.bind(next_++, value);
    return *this;
  }
  // A problem as every table stores it: m, n, k, layout, batch, beta_class (readProblem's order).
  ParamBinder& problem(const ProblemKey& p) {
    return (*this)(static_cast<std::int64_t>(p.m))(static_cast<std::int64_t>(p.n))(static_cast<std::int64_t>(p.k))(
        p.layout)(static_cast<std::int64_t>(p.batch))(p.betaClass);
  }
  ParamBinder& blob(std::string_view bytes) {
    if (bytes.empty())
      st_.bindNull(next_++);
    else
      st_.bindBlob(next_++, bytes);
    return *this;
  }

 private:
  St& st_;
  int next_;
};

template <class St>
void bindResult(St& st, int first, const ResultRecord& r) {
  std::optional<double> gflops = r.gflops;
  if (!gflops && r.medianMs && *r.medianMs > 0) gflops = gflopsOf(r.key.problem, *r.medianMs);
  ParamBinder<St> bind(st, first);
  bind(r.family)(r.instance())(r.params).problem(r.key.problem);
  bind(r.status)(r.statusReason)(r.errorText);
  bind(r.medianMs)(r.minMs)(r.spread)(r.reps)(r.partial ? 1 : 0)(gflops)(r.maxError)(r.smClockMHz);
  bind(r.threadsPerBlock)(r.registers)(r.staticSmemBytes)(r.dynamicSmemBytes)(r.stackFrameBytes);
  bind(r.spillStoreBytes)(r.spillLoadBytes)(r.occupancy)(r.limiter);
  bind(r.key.arch)(r.key.compileOptions)(r.key.sourceHash)(r.key.driverVersion)(r.key.nvrtcVersion);
  bind(r.key.methodVersion)(r.loweredName).blob(r.cubin);
  bind(r.measuredAt.empty() ? utcTimestamp() : r.measuredAt);
}

template <class St>
std::optional<int> optionalInt(const St& st, int c) {
  auto v = st.getOptionalInt64(c);
  return v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
}

// The six problem columns from `first` on (ParamBinder::problem's order).
template <class St>
ProblemKey readProblem(const St& st, int first) {
  return {st.getInt64(first), st.getInt64(first + 1), st.getInt64(first + 2), st.getText(first + 3),
          st.getText(first + 5), st.getInt64(first + 4)};
}

template <class St>
void readResult(const St& st, int first, ResultRecord& r) {
  int i = first;
  r.family = st.getText(i++);
  r.key.instance = st.getText(i++);
  r.params = st.getText(i++);
  r.key.problem = readProblem(st, i);
  i += 6;
  r.status = st.getText(i++);
  r.statusReason = st.getText(i++);
  r.errorText = st.getText(i++);
  r.medianMs = st.getOptionalDouble(i++);
  r.minMs = st.getOptionalDouble(i++);
  r.spread = st.getOptionalDouble(i++);
  r.reps = optionalInt(st, i++);
  r.partial = st.getInt64(i++) != 0;
  r.gflops = st.getOptionalDouble(i++);
  r.maxError = st.getOptionalDouble(i++);
  for (auto* field : {&r.smClockMHz, &r.threadsPerBlock, &r.registers, &r.staticSmemBytes, &r.dynamicSmemBytes,
                      &r.stackFrameBytes, &r.spillStoreBytes, &r.spillLoadBytes})
    *field = optionalInt(st, i++);
  r.occupancy = st.getOptionalDouble(i++);
  r.limiter = st.getText(i++);
  r.key.arch = st.getText(i++);
  r.key.compileOptions = st.getText(i++);
  r.key.sourceHash = st.getText(i++);
  r.key.driverVersion = st.getInt(i++);
  r.key.nvrtcVersion = st.getText(i++);
  r.key.methodVersion = st.getText(i++);
  r.loweredName = st.getText(i++);
  r.cubin = st.getBlob(i++);
  r.measuredAt = st.getText(i++);
}

}  // namespace gemmtune::db::sqlstore
