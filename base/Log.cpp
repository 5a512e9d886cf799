#include "Log.hpp"

namespace gemmtune {

std::shared_ptr<spdlog::logger> logger() {
  // Looked up on each call, not kept: the host program may register "gemmtune" at any time.
  if (auto named = spdlog::get("gemmtune")) return named;
  return spdlog::default_logger();
}

}  // namespace gemmtune
