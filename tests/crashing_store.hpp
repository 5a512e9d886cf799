// CrashingStore: a results store that forwards to a real one until the `crashAt`-th write of
// results that holds a row `marks` picks, which it refuses by throwing before anything is
// written, as a process killed at that moment would leave the store. Tests what a resumed run
// finds after a crash between two writes.
#pragma once

#include <algorithm>
#include <functional>
#include <stdexcept>

#include "ResultStore.hpp"

namespace gemmtune::test {

class CrashingStore : public db::ResultStore {
 public:
  using Marks = std::function<bool(const db::ResultRecord&)>;
  CrashingStore(db::ResultStore& real, Marks marks, int crashAt) : real_(real), marks_(std::move(marks)), crashAt_(crashAt) {}

  std::size_t recordResults(std::int64_t runId, std::span<const db::ResultRecord> records) override {
    if (std::any_of(records.begin(), records.end(), marks_) && ++markedWrites_ == crashAt_)
      throw std::runtime_error("simulated crash between two writes");
    return real_.recordResults(runId, records);
  }
  bool recordResult(std::int64_t runId, const db::ResultRecord& r) override {
    return recordResults(runId, std::span(&r, 1)) == 1;
  }

  const std::string& location() const override { return real_.location(); }
  bool hasSchema() const override { return real_.hasSchema(); }
  std::int64_t recordGpu(const GpuSpec& gpu) override { return real_.recordGpu(gpu); }
  std::int64_t beginRun(const db::RunInfo& run) override { return real_.beginRun(run); }
  void endRun(std::int64_t runId) override { real_.endRun(runId); }
  bool recordBaseline(std::int64_t runId, const db::BaselineRecord& b) override {
    return real_.recordBaseline(runId, b);
  }
  db::MergeSummary mergeBatch(const db::RecordBatch& batch) override { return real_.mergeBatch(batch); }
  void recordSeen(const GpuSpec& gpu, std::span<const db::SeenRecord> records) override {
    real_.recordSeen(gpu, records);
  }
  std::size_t clearSeen(std::optional<std::int64_t> gpuId) override { return real_.clearSeen(gpuId); }
  std::unordered_map<std::string, std::string> finalStatuses(const GpuSpec& gpu) const override {
    return real_.finalStatuses(gpu);
  }
  std::unique_ptr<db::ReadView> consistentReads() const override { return real_.consistentReads(); }
  std::vector<db::StoredGpu> gpus() const override { return real_.gpus(); }
  std::optional<std::int64_t> gpuId(const std::string& fingerprint) const override {
    return real_.gpuId(fingerprint);
  }
  std::vector<db::StoredRun> runs() const override { return real_.runs(); }
  std::vector<db::StoredResult> results(const db::ResultFilter& filter) const override {
    return real_.results(filter);
  }
  std::vector<db::ProblemKey> measuredSizes(const db::ResultFilter& filter) const override {
    return real_.measuredSizes(filter);
  }
  std::string cubinOf(std::int64_t resultId) const override { return real_.cubinOf(resultId); }
  std::vector<db::StoredBaseline> baselines() const override { return real_.baselines(); }
  std::vector<db::StoredSeen> seen(const db::SeenFilter& filter) const override { return real_.seen(filter); }
  std::optional<double> baselineGflops(std::int64_t gpuId, const db::ProblemKey& p,
                                       std::string_view library = "cublas") const override {
    return real_.baselineGflops(gpuId, p, library);
  }

 private:
  db::ResultStore& real_;
  Marks marks_;
  int crashAt_;
  int markedWrites_ = 0;
};

}  // namespace gemmtune::test
