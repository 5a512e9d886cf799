// Warnings: the library's diagnostics go to the spdlog logger named "gemmtune" (the host program
// may register its own under that name first, to redirect them), and each cause is said once per
// Library object: a program that calls sgemm() a million times on a stale database gets one line.
#pragma once

#include <spdlog/logger.h>

#include <memory>
#include <mutex>
#include <set>
#include <string>

namespace gemmtune::library {

// The "gemmtune" logger: the registered one when there is one, else a new stderr logger.
std::shared_ptr<spdlog::logger> libraryLogger();

class Warnings {
 public:
  Warnings() : logger_(libraryLogger()) {}
  // Logs `message` at warning level the first time `cause` is seen.
  void once(const std::string& cause, const std::string& message);
  void debug(const std::string& message) { logger_->debug(message); }

 private:
  std::shared_ptr<spdlog::logger> logger_;
  std::mutex mutex_;
  std::set<std::string> said_;
};

}  // namespace gemmtune::library
