#include "Clock.hpp"

#include <fmt/format.h>

#include <chrono>
#include <ctime>

namespace gemmtune::db {

std::string utcTimestamp() {
  using namespace std::chrono;
  auto now = system_clock::now();
  auto micros = duration_cast<microseconds>(now.time_since_epoch()).count() % 1000000;
  std::time_t seconds = system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                     tm.tm_hour, tm.tm_min, tm.tm_sec, micros);
}

bool isUtcTimestamp(const std::string& t) {
  static constexpr std::string_view shape = "dddd-dd-ddTdd:dd:dd.ddddddZ";
  if (t.size() != shape.size()) return false;
  for (size_t i = 0; i < t.size(); ++i) {
    bool digit = t[i] >= '0' && t[i] <= '9';
    if (shape[i] == 'd' ? !digit : t[i] != shape[i]) return false;
  }
  return true;
}

}  // namespace gemmtune::db
