// The logger gemmtune's layers write their messages to (the results store, serving): spdlog's
// logger named "gemmtune" when one is registered (the command line registers it; the library
// creates it, and a host program may register its own under that name first to route or silence
// gemmtune's messages), else spdlog's default logger.
#pragma once

#include <spdlog/spdlog.h>

#include <memory>

namespace gemmtune {

std::shared_ptr<spdlog::logger> logger();

}  // namespace gemmtune
