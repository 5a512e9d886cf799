#include "ProgressLine.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>

namespace gemmtune {

ProgressLine::ProgressLine(bool enabled) : enabled_(enabled), terminal_(::isatty(2) == 1) {}

ProgressLine::~ProgressLine() { clear(); }

std::string ProgressLine::format(const ProgressState& s) {
  std::string line = fmt::format("{}{} {}: {}/{} candidates, {} rejected, {} pruned, {} failed",
                                 s.gpu.empty() ? "" : s.gpu + " ", s.kind, s.size, s.done, s.total, s.rejected,
                                 s.pruned, s.failed);
  if (!s.bestInstance.empty()) line += fmt::format(", best {:.1f} TFLOP/s {}", s.bestTflops, s.bestInstance);
  if (s.etaSeconds >= 0) line += fmt::format(", ETA {}:{:02}", int(s.etaSeconds) / 60, int(s.etaSeconds) % 60);
  return line;
}

void ProgressLine::update(const ProgressState& state) {
  if (!enabled_) return;
  std::lock_guard lock(mutex_);
  if (terminal_) {
    std::fprintf(stderr, "\r\033[K%s", format(state).c_str());
    std::fflush(stderr);
    drawn_ = true;
    return;
  }
  auto now = std::chrono::steady_clock::now();
  if (now - lastLog_ < std::chrono::seconds(5) && state.done != state.total) return;
  lastLog_ = now;
  spdlog::info("{}", format(state));
}

void ProgressLine::clear() {
  std::lock_guard lock(mutex_);
  if (terminal_ && drawn_) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    drawn_ = false;
  }
}

}  // namespace gemmtune
