// Readers see consistent data while writers write (issue 14): writer threads, one connection
// each, keep replacing the same keys with later measurements and starting new runs, while a
// reader on its own connection runs what `results`, `query` and `export` run. Every read must
// see whole rows (a cubin that belongs to the measurement read with it), best() must always
// answer with an ok row, an export must never name a run it does not list, and at the end no
// row is lost. Both backends (tests/store_test_support.hpp).
// Run: ctest -R StoreReaders
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <sstream>
#include <thread>

#include "JsonExchange.hpp"
#include "Lookup.hpp"
#include "PresentEnvironment.hpp"
#include "store_test_support.hpp"

namespace gemmtune::db {
namespace {

using test::stamp;
using StoreReaders = test::BackendTest;

constexpr int kWriters = 3;
const std::vector<long long> kSizes = {1024, 2048, 4096};
const std::vector<std::string> kInstances = {"blocktile1d_bm64_bn64_bk8_tm8", "smem_bs32"};

// The cubin of a row is as long as its median time in microseconds says, and filled with one
// byte derived from it: a reader can tell when a row's fields come from two measurements.
std::string cubinFor(double medianMs) {
  auto length = static_cast<std::size_t>(std::lround(medianMs * 1000));
  return std::string(length, static_cast<char>('a' + length % 26));
}

bool wholeRow(double medianMs, const std::string& cubin) { return cubin == cubinFor(medianMs); }

ResultRecord measurement(const std::string& instance, long long size, int writer, int round) {
  ResultRecord r = test::okResult(instance, size, size, size, 1000);
  r.medianMs = (200 + (writer * 7919 + round * 104729) % 3000) / 1000.0;  // 0.2 .. 3.2 ms
  r.gflops.reset();
  r.cubin = cubinFor(*r.medianMs);
  // Later rounds are later measurements; writers differ in the microseconds.
  r.measuredAt = fmt::format("2025-02-01T{:02}:{:02}:{:02}.{:06}Z", round / 3600, round / 60 % 60, round % 60, writer);
  return r;
}

constexpr int kRounds = 60;

// One writer's rounds: every key measured again each round, a new run every five rounds.
void writeRounds(ResultStore& store, int writer) {
  std::int64_t run = 0;
  for (int round = 0; round < kRounds; ++round) {
    if (round % 5 == 0) run = store.beginRun(test::testRun());  // new runs keep appearing
    for (long long size : kSizes)
      for (const auto& instance : kInstances) store.recordResult(run, measurement(instance, size, writer, round));
  }
}

// One round of what the read commands run (`export` too when `withExport`); the first
// inconsistency seen, or empty.
std::string readOnce(const ResultStore& reader, serving::Lookup& lookup, bool withExport) {
  // `results`: one query, whole rows.
  ResultFilter all;
  all.withCubin = true;
  for (const auto& r : reader.results(all))
    if (r.status != "ok" || !wholeRow(*r.medianMs, r.cubin))
      return fmt::format("results: {} {} with median {} and a {}-byte cubin", r.instance(), r.fullStatus(),
                         *r.medianMs, r.cubin.size());
  // `query` and the library: several queries for one answer.
  lookup.clear();
  for (long long size : kSizes) {
    serving::LookupResult best = lookup.best(test::testGpu(), {size, size, size});
    if (best.quality == serving::MatchQuality::none) continue;  // nothing written yet
    if (best.cubin.empty() || !wholeRow(best.medianMs, best.cubin))
      return fmt::format("best() at {}: {} with median {} and a {}-byte cubin", size, best.instance, best.medianMs,
                         best.cubin.size());
  }
  // `export`: every result's run is listed, so the file imports.
  if (withExport) {
    std::ostringstream text;
    exportJson(reader, text);
    try {
      parseExchange(text.str(), "an export during writes");
    } catch (const DataError& e) {
      return e.what();
    }
  }
  return {};
}

TEST_P(StoreReaders, SeeWholeRowsWhileWritersWrite) {
  open();  // the schema
  std::atomic<int> writersLeft{kWriters};
  std::atomic<int> failures{0};
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w)
    writers.emplace_back([&, w] {
      try {
        writeRounds(*open(), w);
      } catch (const std::exception& e) {
        ADD_FAILURE() << "writer " << w << ": " << e.what();
        ++failures;
      }
      --writersLeft;
    });

  auto reader = open(OpenMode::ReadOnly);
  serving::Lookup lookup(*reader, serving::presentEnvironment());
  int reads = 0, exports = 0;
  std::string inconsistent;
  while (inconsistent.empty() && (writersLeft > 0 || reads < 20)) {
    ++reads;
    const bool withExport = reads % 4 == 0;
    inconsistent = readOnce(*reader, lookup, withExport);
    if (withExport && inconsistent.empty()) ++exports;
  }
  for (auto& t : writers) t.join();
  ASSERT_EQ(failures, 0);
  ASSERT_EQ(inconsistent, "") << "after " << reads << " reads";
  std::printf("[ readers ] %s: %d consistent reads and %d exports while %d writers wrote\n", GetParam().c_str(), reads,
              exports, kWriters);
  lookup.clear();
  for (long long size : kSizes)
    EXPECT_EQ(lookup.best(test::testGpu(), {size, size, size}).quality, serving::MatchQuality::exact) << size;

  // Nothing lost: one row per key, the latest measurement of each.
  auto rows = open(OpenMode::ReadOnly)->results({});
  EXPECT_EQ(rows.size(), kSizes.size() * kInstances.size());
  for (const auto& r : rows) {
    std::string latest;
    for (int w = 0; w < kWriters; ++w) latest = std::max(latest, measurement(r.instance(), r.key.problem.m, w, kRounds - 1).measuredAt);
    EXPECT_EQ(r.measuredAt, latest) << r.instance();
  }
  EXPECT_EQ(open(OpenMode::ReadOnly)->runs().size(), static_cast<std::size_t>(kWriters * kRounds / 5));
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreReaders, test::backendNames(), test::backendName);

}  // namespace
}  // namespace gemmtune::db
