#include "Warnings.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace gemmtune::library {

std::shared_ptr<spdlog::logger> libraryLogger() {
  static std::mutex mutex;
  std::lock_guard lock(mutex);
  if (auto existing = spdlog::get("gemmtune")) return existing;
  try {
    return spdlog::stderr_color_mt("gemmtune");
  } catch (const spdlog::spdlog_ex&) {
    // Registered by the host program between the get() above and now.
    if (auto existing = spdlog::get("gemmtune")) return existing;
    throw;
  }
}

void Warnings::once(const std::string& cause, const std::string& message) {
  {
    std::lock_guard lock(mutex_);
    if (!said_.insert(cause).second) return;
  }
  logger_->warn(message);
}

}  // namespace gemmtune::library
