// OutputFile and PendingFile: special files written in place, symlinks followed, regular files
// replaced whole, and unfinished files removed when the process is killed (issue 13).
// Run: ctest -R outputFile
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "gemmtune/Errors.hpp"
#include "OutputFile.hpp"
#include "PendingFiles.hpp"
#include "db_test_support.hpp"

using namespace gemmtune;

namespace {

// Runs `body` in a child process; returns its wait status.
template <class Body>
int inChild(Body body) {
  pid_t pid = ::fork();
  if (pid == 0) {
    body();
    std::_Exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

}  // namespace

TEST(outputFile, AFifoIsWrittenInPlaceAndStaysAFifo) {
  test::ScratchDir dir;
  auto fifo = dir / "f";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] { got = test::readBytes(fifo); });
  writeOutputFile(fifo, "hello", "the test");
  reader.join();
  EXPECT_EQ(got, "hello");
  EXPECT_TRUE(std::filesystem::is_fifo(fifo));
}

TEST(outputFile, ASymlinkKeepsPointingAtTheNewContent) {
  test::ScratchDir dir;
  test::writeBytes(dir / "real", "old");
  ::chmod((dir / "real").c_str(), 0640);
  std::filesystem::create_symlink("real", dir / "link");
  writeOutputFile(dir / "link", "new", "the test");
  EXPECT_TRUE(std::filesystem::is_symlink(dir / "link"));
  EXPECT_EQ(test::readBytes(dir / "real"), "new");
  struct stat st {};
  ::stat((dir / "real").c_str(), &st);
  EXPECT_EQ(st.st_mode & 0777, 0640u) << "a replaced file keeps its permissions";
}

TEST(outputFile, AFailedWriteLeavesTheOldFileAndNoTemporary) {
  test::ScratchDir dir;
  test::writeBytes(dir / "out", "old");
  int status = inChild([&] {
    ::signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit {100, 100};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    try {
      writeOutputFile(dir / "out", std::string(5000, 'x'), "the test");
    } catch (const IoError&) {
      std::_Exit(74);
    }
  });
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 74);
  EXPECT_EQ(test::readBytes(dir / "out"), "old");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);
}

TEST(outputFile, FullStandardOutputIsAnIoError) {
  int status = inChild([] {
    int fd = ::open("/dev/full", O_WRONLY);
    ::dup2(fd, 1);
    try {
      writeStdout("x", "the test");
    } catch (const IoError&) {
      std::_Exit(74);
    }
  });
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 74);
}

TEST(outputFile, AKilledProcessLeavesNoPendingFile) {
  test::ScratchDir dir;
  auto unfinished = dir / "export.json.tmp1";
  for (int sig : {SIGINT, SIGTERM}) {
    int status = inChild([&] {
      test::writeBytes(unfinished, "half");
      PendingFile pending(unfinished);
      ::raise(sig);
    });
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig);
    EXPECT_FALSE(std::filesystem::exists(unfinished));
  }
  test::writeBytes(unfinished, "done");
  {
    PendingFile pending(unfinished);
    pending.keep();
  }
  EXPECT_TRUE(std::filesystem::exists(unfinished));
}
