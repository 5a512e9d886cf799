// ProgressLine: the live status of a long tuning run. On a terminal, one line on stderr redrawn
// in place; otherwise a plain log line at most every few seconds, so logs stay readable.
#pragma once

#include <chrono>
#include <mutex>
#include <string>

namespace gemmtune {

struct ProgressState {
  std::string gpu;
  std::string kind = "size";  // "basis": a basis shape (BasisShapes.hpp) after the requested sizes
  std::string size;
  int done = 0, total = 0;
  int rejected = 0, failed = 0, pruned = 0;
  double bestTflops = 0;
  std::string bestInstance;
  double etaSeconds = -1;  // < 0: unknown
};

class ProgressLine {
 public:
  explicit ProgressLine(bool enabled = true);
  ~ProgressLine();
  void update(const ProgressState& state);
  // Clears the live line (before printing results or logging an error).
  void clear();
  static std::string format(const ProgressState& state);

 private:
  bool enabled_, terminal_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point lastLog_{};
  std::mutex mutex_;
};

}  // namespace gemmtune
