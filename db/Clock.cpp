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
  // The shape alone let 2025-13-45T99:99:99 in, which then sorted as newer than any real time.
  auto num = [&](size_t at, size_t len) { return std::stoi(t.substr(at, len)); };
  const int year = num(0, 4), month = num(5, 2), day = num(8, 2);
  if (year < 1970 || month < 1 || month > 12 || day < 1) return false;
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  if (day > kDays[month - 1] + (month == 2 && leap ? 1 : 0)) return false;
  return num(11, 2) < 24 && num(14, 2) < 60 && num(17, 2) < 60;
}

}  // namespace gemmtune::db
