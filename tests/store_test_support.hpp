// Shared by the tests that run against both results-store backends: a fixture parametrized by
// "sqlite" (a file in a scratch directory) or "postgresql" (a fresh database on a server of the
// test's own, tests/pg_server.hpp; skipped with the reason when the server binaries are
// missing), and rows that differ only by their key.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "ResultStore.hpp"
#include "db_test_support.hpp"
#include "pg_server.hpp"

namespace gemmtune::test {

class BackendTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "postgresql") {
      if (auto why = PgServer::unavailableReason(); !why.empty()) GTEST_SKIP() << why;
      server_ = std::make_unique<PgServer>();
      location_ = server_->createDatabase("store_test");
    } else {
      location_ = "sqlite:" + (dir_ / "tune.db").string();
    }
  }
  std::unique_ptr<db::ResultStore> open(db::OpenMode mode = db::OpenMode::ReadWrite) const {
    return db::openStore(location_, {mode, db::OpenCheck::Quick});
  }
  // Another, empty store of the same backend.
  std::string otherLocation(const std::string& name) {
    if (server_) return server_->createDatabase(name);
    return "sqlite:" + (dir_ / (name + ".db")).string();
  }

  ScratchDir dir_;
  std::unique_ptr<PgServer> server_;
  std::string location_;
};

// Both backends, named by their parameter.
inline auto backendNames() { return ::testing::Values("sqlite", "postgresql"); }
inline std::string backendName(const ::testing::TestParamInfo<std::string>& info) { return info.param; }

// A valid ok record whose key differs by `i` (its M is 64 + i).
inline db::ResultRecord keyedRow(int i, const std::string& measuredAt) {
  db::ResultRecord r = okResult("blocktile1d_bm64_bn64_bk8_tm8", 64 + i, 4096, 4096, 1000.0 + i);
  r.measuredAt = measuredAt;
  return r;
}

// 2025-01-31T12:MM:SS.000000Z for `second` < 3600.
inline std::string stamp(int second) {
  return fmt::format("2025-01-31T12:{:02}:{:02}.000000Z", second / 60, second % 60);
}

}  // namespace gemmtune::test
