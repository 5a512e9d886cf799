// Checks on a results database left behind by tuning runs: rows as stored, integrity, rows that
// must survive a later run, and whether two runs agree on the best configuration.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "ResultStore.hpp"
#include "SizeSpec.hpp"

namespace gemmtune::test {

// Every result row (cubins included). Read-only: safe while a tuner writes the file.
std::vector<db::StoredResult> readRows(const std::filesystem::path& dbPath);
// PRAGMA integrity_check after a read-write open, as the next tuning run would open it.
std::string integrity(const std::filesystem::path& dbPath);

// instance -> median ms of the complete (not partial) ok rows at `size`; `family` empty: all.
using Medians = std::map<std::string, double>;
Medians okMedians(const std::vector<db::StoredResult>& rows, const GemmShape& size, const std::string& family = {});

// What `rows` hold for `instance` at `size`, for a failure message: its status with median, spread,
// repetitions, SM clock, and the run and time that measured it; or "absent".
std::string rowStory(const std::vector<db::StoredResult>& rows, const GemmShape& size, const std::string& instance);

// The instance with the least median, or null when there is none.
const std::string* winner(const Medians& m);

// What a killed run left at `dbPath`, against what the kill before it left (`previous`, then
// replaced by these rows): integrity ok, each key once, every final row kept. Nothing to check
// where the run died before it created the database.
void checkWhatAKillLeft(const std::filesystem::path& dbPath, std::vector<db::StoredResult>& previous);

// Each cache key and each (instance, problem) appears once.
::testing::AssertionResult onePerKey(const std::vector<db::StoredResult>& rows);
// Every row of `before` with a final status (not pruned, not worker_died) is in `after` with the
// same status: a later run may re-time it, never lose or downgrade it.
::testing::AssertionResult finalRowsKept(const std::vector<db::StoredResult>& before,
                                         const std::vector<db::StoredResult>& after);
// Two runs agree on a best when they pick the same instance, or — timing noise between near
// equals — when each run that measured the other's winner found it within `tolerance` of its
// own winner (and at least one did).
::testing::AssertionResult sameBest(const Medians& reference, const Medians& other, double tolerance = 0.03);

}  // namespace gemmtune::test
