// A PostgreSQL store whose server goes away mid-write (issue 14): a writer on its own connection
// records rows one at a time while the test server is restarted (pg_ctl stop -m fast + start: the
// server ends every session). The store reconnects once and runs the interrupted call again, so
// the writer finishes with nothing lost and nothing twice. A server that stays away longer than
// the store waits is one clear error (StoreConnectionLost: an I/O error, exit 74, the password
// masked) — and a resumed writer, skipping what is stored (as `tune --resume` does), then
// completes the set without duplicates.
// Run: ctest -R StoreReconnect
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <thread>

#include "ExitCodes.hpp"
#include "PgConnection.hpp"
#include "store_test_support.hpp"

namespace gemmtune::db {
namespace {

using test::keyedRow;
using test::stamp;

constexpr int kRows = 600;

class StoreReconnect : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = test::PgServer::unavailableReason(); !why.empty()) GTEST_SKIP() << why;
    server_ = std::make_unique<test::PgServer>();
    location_ = server_->createDatabase("reconnect_test");
  }
  std::unique_ptr<ResultStore> open() const { return openStore(location_, {OpenMode::ReadWrite, OpenCheck::Quick}); }

  // Writes rows [0, kRows) not already stored, one transaction each; `written` counts calls done.
  void writeMissing(ResultStore& store, std::atomic<int>& written) {
    auto done = store.finalStatuses(test::testGpu());
    auto run = store.beginRun(test::testRun());
    for (int i = 0; i < kRows; ++i) {
      ResultRecord r = keyedRow(i, stamp(1));
      if (!done.count(r.key.hash())) store.recordResult(run, r);
      ++written;
    }
    store.endRun(run);
  }
  void waitFor(const std::atomic<int>& written, int count) {
    while (written < count) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // Every row exactly once.
  void expectAllRowsOnce() {
    auto rows = open()->results({});
    std::set<std::string> keys;
    for (const auto& r : rows) keys.insert(r.cacheKeyHash);
    EXPECT_EQ(rows.size(), static_cast<std::size_t>(kRows)) << "lost or extra rows";
    EXPECT_EQ(keys.size(), rows.size()) << "duplicated keys";
  }

  std::unique_ptr<test::PgServer> server_;
  std::string location_;
};

TEST_F(StoreReconnect, AServerRestartMidWriteIsSurvived) {
  auto store = open();
  std::atomic<int> written{0};
  std::string failure;
  std::thread writer([&] {
    try {
      writeMissing(*store, written);
    } catch (const std::exception& e) {
      failure = e.what();
    }
  });
  waitFor(written, kRows / 4);
  server_->restart();
  writer.join();
  EXPECT_EQ(failure, "");
  EXPECT_EQ(written, kRows);
  expectAllRowsOnce();
  EXPECT_EQ(open()->runs().size(), 1u) << "a retried beginRun must not add a second run";
  // The reader side reconnects too: the same store object reads after another restart.
  server_->restart();
  EXPECT_EQ(store->results({}).size(), static_cast<std::size_t>(kRows));
}

TEST_F(StoreReconnect, AServerThatStaysAwayIsOneClearErrorThenAResumeCompletes) {
  auto store = open();
  std::atomic<int> written{0};
  std::optional<StoreConnectionLost> lost;
  int otherErrors = 0;
  std::thread writer([&] {
    try {
      writeMissing(*store, written);
    } catch (const StoreConnectionLost& e) {
      lost = e;
    } catch (const std::exception&) {
      ++otherErrors;
    }
  });
  waitFor(written, kRows / 4);
  server_->stop();
  auto stopped = std::chrono::steady_clock::now();
  writer.join();
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped).count();
  ASSERT_TRUE(lost) << "expected StoreConnectionLost";
  EXPECT_EQ(otherErrors, 0);
  EXPECT_LT(written, kRows);
  EXPECT_GE(waited, PgConnection::kReconnectPatienceSeconds - 1.0) << "gave up without waiting for the server";
  std::string message = lost->what();
  EXPECT_EQ(exitCodeOf(*lost), kExitIoError);
  EXPECT_NE(message.find("could not reconnect"), std::string::npos) << message;
  EXPECT_NE(message.find("--resume"), std::string::npos) << message;
  EXPECT_NE(message.find("gemmtune:***@127.0.0.1"), std::string::npos) << message;
  EXPECT_EQ(message.find(test::PgServer::kPassword), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << "one line: " << message;

  server_->start();
  std::atomic<int> resumed{0};
  writeMissing(*open(), resumed);
  expectAllRowsOnce();
  EXPECT_EQ(open()->runs().size(), 2u);
}

}  // namespace
}  // namespace gemmtune::db
