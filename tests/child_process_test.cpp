// Helper processes seen from the parent (base/ChildProcess.hpp, base/PipeIo.hpp): how a child
// ended in one format, a deadline that passes while the child runs on, a kill, a program that
// cannot start, and pipes bounded by deadlines whose reader may go away.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "ChildProcess.hpp"
#include "ExitCodes.hpp"
#include "PipeIo.hpp"

using namespace gemmtune;
using Clock = ChildProcess::Clock;
using namespace std::chrono_literals;

namespace {

ChildProcess shell(const std::string& script, ChildProcess::Stdio stdio = ChildProcess::Stdio::DevNull) {
  return ChildProcess("test child", {"/bin/sh", "-c", script}, stdio);
}

// Whether `pid` runs: it exists and is no zombie (/proc/PID/stat's third field).
bool running(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z';
}

}  // namespace

TEST(ChildProcess, AnExitCodeIsToldAsSuch) {
  ChildProcess child = shell("exit 3");
  ASSERT_TRUE(child.waitUntil(Clock::now() + 60s));
  EXPECT_FALSE(child.running());
  EXPECT_EQ(child.exitText(), "exited with code 3");
  EXPECT_EQ(child.exitCode(), 3);
  EXPECT_EQ(child.termSignal(), 0);
}

TEST(ChildProcess, ASignalIsToldWithItsName) {
  ChildProcess child = shell("kill -TERM $$");
  ASSERT_TRUE(child.waitUntil(Clock::now() + 60s));
  EXPECT_EQ(child.exitText(), "killed by signal 15 (Terminated)");
  EXPECT_FALSE(child.exitCode().has_value());
  EXPECT_EQ(child.termSignal(), SIGTERM);
}

// The wait ends at the deadline with the child still running; kill() then ends and reaps it.
TEST(ChildProcess, ADeadlineThatPassesLeavesTheChildToKill) {
  ChildProcess child("sleeper", {"/bin/sleep", "600"}, ChildProcess::Stdio::DevNull);
  const auto start = Clock::now();
  EXPECT_FALSE(child.waitUntil(start + 300ms));
  const auto waited = Clock::now() - start;
  EXPECT_GE(waited, 300ms);
  EXPECT_LT(waited, 30s);
  EXPECT_TRUE(child.running());
  child.kill();
  EXPECT_FALSE(child.running());
  EXPECT_EQ(child.exitText(), "killed by signal 9 (Killed)");
  EXPECT_EQ(child.input(), -1);
}

// A waiter wakes when the child exits, long before its deadline.
TEST(ChildProcess, AnExitEndsTheWaitBeforeTheDeadline) {
  ChildProcess child = shell("sleep 0.2");
  const auto start = Clock::now();
  ASSERT_TRUE(child.waitUntil(start + 600s));
  EXPECT_LT(Clock::now() - start, 60s);
  EXPECT_EQ(child.exitText(), "exited with code 0");
}

TEST(ChildProcess, KillAsyncFromAnotherThreadEndsTheWait) {
  ChildProcess child("sleeper", {"/bin/sleep", "600"}, ChildProcess::Stdio::DevNull);
  std::thread([&child] { child.killAsync(); }).join();
  ASSERT_TRUE(child.waitUntil(Clock::now() + 60s));
  EXPECT_EQ(child.exitText(), "killed by signal 9 (Killed)");
}

TEST(ChildProcess, ReapKillsAChildThatOutlivesItsGrace) {
  ChildProcess child("sleeper", {"/bin/sleep", "600"}, ChildProcess::Stdio::DevNull);
  EXPECT_EQ(child.reap(200ms), "killed by signal 9 (Killed)");
  EXPECT_EQ(child.reap(200ms), "killed by signal 9 (Killed)");  // idempotent
}

TEST(ChildProcess, AMissingProgramCannotStart) {
  try {
    ChildProcess child("helper", {"/nonexistent/gemmtune-helper", "x"}, ChildProcess::Stdio::Pipes);
    FAIL() << "started " << child.pid();
  } catch (const UnavailableError& e) {
    EXPECT_STREQ(e.what(), "cannot start helper /nonexistent/gemmtune-helper: No such file or directory");
  }
}

TEST(ChildProcess, PipesCarryBytesBothWaysWithinDeadlines) {
  ChildProcess child("cat", {"/bin/cat"}, ChildProcess::Stdio::Pipes);
  ASSERT_EQ(writeAllBefore(child.input(), "hello", Clock::now() + 60s), PipeIo::Ok);
  std::string got(5, '\0');
  ASSERT_EQ(readExactlyBefore(child.output(), got.data(), got.size(), Clock::now() + 60s), PipeIo::Ok);
  EXPECT_EQ(got, "hello");
  EXPECT_EQ(readExactlyBefore(child.output(), got.data(), 1, Clock::now() + 100ms), PipeIo::Timeout);
  child.kill();
  EXPECT_EQ(readExactlyBefore(child.output(), got.data(), 1, Clock::now() + 60s), PipeIo::Closed);
  EXPECT_EQ(writeAllBefore(child.input(), "x", Clock::now() + 60s), PipeIo::Closed);
}

// Writing to a child that closed its stdin is Closed, and the SIGPIPE it raises dies with the
// write: this test process would otherwise be killed by it.
TEST(ChildProcess, AReaderThatWentAwayIsClosedNotSigpipe) {
  ChildProcess child = shell("exec 0<&-; exec sleep 600", ChildProcess::Stdio::Pipes);
  const std::string lots(1 << 20, 'x');  // more than a pipe holds: the write must wait for the close
  EXPECT_EQ(writeAllBefore(child.input(), lots, Clock::now() + 60s), PipeIo::Closed);
  sigset_t pending;
  ::sigpending(&pending);
  EXPECT_FALSE(sigismember(&pending, SIGPIPE));
}

// What the child left running in its group goes with it: the group is killed while the exited
// leader, not yet reaped, still holds the group's id.
TEST(ChildProcess, WhatTheChildLeftInItsGroupIsKilledWhenItExits) {
  ChildProcess child = shell("sleep 600 & echo $! ; exit 0", ChildProcess::Stdio::Pipes);
  std::string line;
  char c = 0;
  while (readExactlyBefore(child.output(), &c, 1, Clock::now() + 60s) == PipeIo::Ok && c != '\n') line += c;
  const pid_t leftBehind = std::stoi(line);
  ASSERT_TRUE(child.waitUntil(Clock::now() + 60s));
  EXPECT_EQ(child.exitText(), "exited with code 0");
  // Killed: gone, or a zombie until whoever adopted it (init, a subreaper) reaps it.
  const auto until = Clock::now() + 30s;
  while (running(leftBehind) && Clock::now() < until) std::this_thread::sleep_for(10ms);
  EXPECT_FALSE(running(leftBehind)) << "the background sleep " << leftBehind << " outlived its group's leader";
}

// time_point::max() means no deadline: poll() without a timeout, not a wait of 12 days.
TEST(PipeIo, TheLatestDeadlineIsNoTimeout) {
  EXPECT_EQ(pollTimeoutMs(PipeClock::time_point::max()), -1);
  EXPECT_EQ(pollTimeoutMs(PipeClock::now() - 1s), 0);
  EXPECT_GE(pollTimeoutMs(PipeClock::now() + 1s), 900);
}
