// SqlStore: the one implementation of ResultStore in SQL, over a connection type — db::Database
// (SQLite, with db::Transaction) or db::PgConnection (PostgreSQL, with db::PgTransaction). Both
// speak the same SQL (`?` parameters, ON CONFLICT upserts, RETURNING), so each query is written
// once. The definitions live in SqlStoreImpl.hpp (and the headers it includes, one per job),
// instantiated in SqliteStore.cpp and PgStore.cpp.
//
// A connection that can reconnect (PostgreSQL) and loses its server mid-call is re-established
// once and the whole call — its own transaction — is run again. Every write is idempotent
// (upserts where a tie keeps the stored row, runs by a uid chosen before the first attempt), so
// a commit whose acknowledgement was lost is not written twice. Inside consistentReads() there
// is no retry: the view is gone with the connection.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "ResultStore.hpp"

namespace gemmtune::db {

template <class Conn, class Tx>
class SqlStore final : public ResultStore {
 public:
  // Over a connection the caller keeps open.
  explicit SqlStore(Conn& conn);
  // Owning the connection.
  explicit SqlStore(std::unique_ptr<Conn> conn);

  const std::string& location() const override { return location_; }
  bool hasSchema() const override;

  std::int64_t recordGpu(const GpuSpec& gpu) override;
  std::int64_t beginRun(const RunInfo& run) override;
  void endRun(std::int64_t runId) override;
  bool recordResult(std::int64_t runId, const ResultRecord& r) override;
  bool recordBaseline(std::int64_t runId, const BaselineRecord& b) override;
  std::size_t recordResults(std::int64_t runId, std::span<const ResultRecord> records) override;
  MergeSummary mergeBatch(const RecordBatch& batch) override;
  void recordSeen(const GpuSpec& gpu, std::span<const SeenRecord> records) override;
  std::size_t clearSeen(std::optional<std::int64_t> gpuId) override;
  std::unordered_map<std::string, std::string> finalStatuses(const GpuSpec& gpu) const override;

  std::unique_ptr<ReadView> consistentReads() const override;
  std::vector<StoredGpu> gpus() const override;
  std::optional<std::int64_t> gpuId(const std::string& fingerprint) const override;
  std::vector<StoredRun> runs() const override;
  std::vector<StoredResult> results(const ResultFilter& filter) const override;
  std::vector<ProblemKey> measuredSizes(const ResultFilter& filter) const override;
  std::string cubinOf(std::int64_t resultId) const override;
  std::vector<StoredBaseline> baselines() const override;
  std::vector<StoredSeen> seen(const SeenFilter& filter) const override;
  std::optional<double> baselineGflops(std::int64_t gpuId, const ProblemKey& p,
                                       std::string_view library = "cublas") const override;

  // --- building blocks for import: call inside a Tx ---------------------------------------
  std::int64_t upsertGpu(const GpuSpec& gpu, const std::string& firstSeen);
  // Returns the run's id; an existing uid keeps its row (an end time is filled in if missing).
  std::int64_t insertRun(std::int64_t gpuId, const RunInfo& run);
  bool upsertResult(std::int64_t runId, std::int64_t gpuId, const ResultRecord& r);
  // The same with a statement from resultUpsert(), prepared once for many rows (preparing the
  // upsert was half of a tuner's time writing thousands of rejected rows to SQLite).
  using Statement = decltype(std::declval<Conn&>().prepare(std::string_view()));
  Statement resultUpsert();
  bool upsertResult(Statement& upsert, std::int64_t runId, std::int64_t gpuId, const ResultRecord& r);
  bool upsertBaseline(std::int64_t runId, std::int64_t gpuId, const BaselineRecord& b);

 private:
  class View;
  // Runs `call` (one whole transaction); after a lost connection, reconnects and runs it again.
  template <class Call>
  auto retried(Call&& call) const -> decltype(call());
  // The run's GPU: id and fingerprint; UsageError when there is no such run.
  std::pair<std::int64_t, std::string> gpuOfRun(std::int64_t runId) const;

  std::unique_ptr<Conn> owned_;
  Conn& db_;
  std::string location_;
  mutable int views_ = 0;  // consistentReads() held now (nested ones count)
  mutable int calls_ = 0;  // retried() calls in progress (an outer one retries)
};

}  // namespace gemmtune::db
