// Time stamps stored in the database: UTC ISO-8601 with microseconds, so that text order is time
// order ("2025-06-01T12:00:00.000123Z") and "newer wins" comparisons need no parsing.
#pragma once

#include <string>

namespace gemmtune::db {

std::string utcTimestamp();
// True when `text` has exactly the form utcTimestamp() writes.
bool isUtcTimestamp(const std::string& text);

}  // namespace gemmtune::db
