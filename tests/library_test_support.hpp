// Shared fixtures for the library tests: a results database written the way the tuner writes it,
// and a capture of what the library says on its "gemmtune" logger.
#pragma once

#include <spdlog/sinks/base_sink.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "Database.hpp"
#include "SqliteStore.hpp"
#include "GpuProfiles.hpp"
#include "ResultStore.hpp"
#include "Warnings.hpp"
#include "db_test_support.hpp"

namespace gemmtune::test {

// The offline H100 profile: planning without a GPU.
inline GpuSpec h100() { return findGpuProfile("h100")->spec; }

// Every warning the library logs while the object lives.
class WarningCapture {
 public:
  WarningCapture() : logger_(library::libraryLogger()), sink_(std::make_shared<Sink>()) {
    logger_->sinks().push_back(sink_);
  }
  ~WarningCapture() {
    auto& sinks = logger_->sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), sink_), sinks.end());
  }
  std::vector<std::string> warnings() const {
    std::lock_guard lock(sink_->mutex);
    return sink_->warnings;
  }
  std::string joined() const {
    std::string out;
    for (const auto& w : warnings()) out += w + "\n";
    return out;
  }

 private:
  struct Sink : spdlog::sinks::base_sink<std::mutex> {
    std::mutex mutex;
    std::vector<std::string> warnings;
    void sink_it_(const spdlog::details::log_msg& msg) override {
      if (msg.level != spdlog::level::warn) return;
      std::lock_guard lock(mutex);
      warnings.emplace_back(msg.payload.data(), msg.payload.size());
    }
    void flush_() override {}
  };
  std::shared_ptr<spdlog::logger> logger_;
  std::shared_ptr<Sink> sink_;
};

// A results database at `path` holding `records` for `gpu`, closed again when this returns.
inline void writeDatabase(const std::filesystem::path& path, const GpuSpec& gpu,
                          const std::vector<db::ResultRecord>& records) {
  db::Database database(path, {db::OpenMode::ReadWrite, db::OpenCheck::Quick});
  db::SqliteStore store(database);
  auto run = store.beginRun(testRun(gpu));
  for (const auto& r : records)
    if (!store.recordResult(run, r)) throw std::runtime_error("fixture row not recorded: " + r.key.instance);
}

}  // namespace gemmtune::test
