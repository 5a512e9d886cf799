#include "engine_db_checks.hpp"

#include <cmath>

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "Database.hpp"
#include "SqliteStore.hpp"

namespace gemmtune::test {

namespace {

std::string problemOf(const db::StoredResult& r) {
  return fmt::format("{}x{}x{}", r.key.problem.m, r.key.problem.n, r.key.problem.k);
}

}  // namespace

const std::string* winner(const Medians& m) {
  auto it = std::min_element(m.begin(), m.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  return it == m.end() ? nullptr : &it->first;
}

void checkWhatAKillLeft(const std::filesystem::path& dbPath, std::vector<db::StoredResult>& previous) {
  if (!std::filesystem::exists(dbPath)) return;
  EXPECT_EQ(integrity(dbPath), "ok");
  auto rows = readRows(dbPath);
  EXPECT_TRUE(onePerKey(rows));
  EXPECT_TRUE(finalRowsKept(previous, rows));
  previous = std::move(rows);
}

std::vector<db::StoredResult> readRows(const std::filesystem::path& dbPath) {
  db::Database database(dbPath, {db::OpenMode::ReadOnly, db::OpenCheck::Header});
  db::ResultFilter all;
  all.withCubin = true;
  return db::SqliteStore(database).results(all);
}

std::string integrity(const std::filesystem::path& dbPath) {
  db::Database database(dbPath, {db::OpenMode::ReadWrite, db::OpenCheck::Quick});
  return database.integrityCheck();
}

Medians okMedians(const std::vector<db::StoredResult>& rows, const GemmShape& size, const std::string& family) {
  Medians out;
  for (const auto& r : rows)
    if (r.status == "ok" && !r.partial && r.medianMs && r.key.problem.m == size.M && r.key.problem.n == size.N &&
        r.key.problem.k == size.K && (family.empty() || r.family == family))
      out[r.instance()] = *r.medianMs;
  return out;
}

std::string rowStory(const std::vector<db::StoredResult>& rows, const GemmShape& size, const std::string& instance) {
  for (const auto& r : rows) {
    if (r.instance() != instance || r.key.problem.m != size.M || r.key.problem.n != size.N || r.key.problem.k != size.K)
      continue;
    std::string story = r.fullStatus();
    if (r.medianMs) story += fmt::format(", median {:.4f} ms", *r.medianMs);
    if (r.spread) story += fmt::format(", spread {:.3f}", *r.spread);
    if (r.reps) story += fmt::format(", {} reps", *r.reps);
    if (r.partial) story += ", partial";
    if (r.smClockMHz) story += fmt::format(", SM clock {} MHz", *r.smClockMHz);
    return story + fmt::format(", run {} at {}", r.runId, r.measuredAt);
  }
  return "absent";
}

::testing::AssertionResult onePerKey(const std::vector<db::StoredResult>& rows) {
  std::set<std::string> keys, names;
  for (const auto& r : rows) {
    if (!keys.insert(r.cacheKeyHash).second)
      return ::testing::AssertionFailure() << "cache key of " << r.instance() << " stored twice";
    if (!names.insert(r.instance() + "@" + problemOf(r)).second)
      return ::testing::AssertionFailure() << r.instance() << " at " << problemOf(r) << " stored under two cache keys";
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult finalRowsKept(const std::vector<db::StoredResult>& before,
                                         const std::vector<db::StoredResult>& after) {
  std::map<std::string, const db::StoredResult*> now;
  for (const auto& r : after) now[r.cacheKeyHash] = &r;
  for (const auto& r : before) {
    if (!db::isFinalStatus(r.fullStatus())) continue;
    auto it = now.find(r.cacheKeyHash);
    if (it == now.end())
      return ::testing::AssertionFailure() << r.instance() << " at " << problemOf(r) << " (" << r.fullStatus()
                                           << ") was lost";
    // Re-timing a finalist stores it again as ok:retimed: kept, not downgraded.
    const bool retimed = r.status == "ok" && it->second->fullStatus() == "ok:retimed";
    if (it->second->fullStatus() != r.fullStatus() && !retimed)
      return ::testing::AssertionFailure() << r.instance() << " at " << problemOf(r) << " went from "
                                           << r.fullStatus() << " to " << it->second->fullStatus();
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult sameBest(const Medians& reference, const Medians& other, double tolerance) {
  const std::string* a = winner(reference);
  const std::string* b = winner(other);
  if (!a || !b) return ::testing::AssertionFailure() << "a run has no complete ok row";
  if (*a == *b) return ::testing::AssertionSuccess() << *a;
  int compared = 0;
  for (auto [run, mine, theirs] : {std::tuple{&reference, a, b}, std::tuple{&other, b, a}}) {
    auto it = run->find(*theirs);
    if (it == run->end()) continue;
    ++compared;
    const double ratio = it->second / run->at(*mine);
    if (ratio > 1 + tolerance)
      return ::testing::AssertionFailure() << "winners differ: " << *a << " (reference) vs " << *b << "; "
                                           << *theirs << " is " << fmt::format("{:.1f}", 100 * (ratio - 1))
                                           << " % slower than " << *mine << " in the run that picked " << *mine;
  }
  if (compared == 0) {
    // Rank carrying prunes from a noisy ranking at the smaller size, so two runs may each time a
    // set the other never saw: then the winners must at least be equally fast across the runs.
    const double ratio = other.at(*b) / reference.at(*a);
    if (ratio > 1 + tolerance || ratio < 1 / (1 + tolerance))
      return ::testing::AssertionFailure() << "winners differ (" << *a << " vs " << *b
                                           << "), neither run measured the other's, and their times differ by "
                                           << fmt::format("{:.1f}", 100 * std::abs(ratio - 1)) << " %";
    return ::testing::AssertionSuccess() << *a << " ~ " << *b << " (across runs)";
  }
  return ::testing::AssertionSuccess() << *a << " ~ " << *b;
}

}  // namespace gemmtune::test
