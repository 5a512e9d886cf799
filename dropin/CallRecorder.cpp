#include "CallRecorder.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gemmtune::dropin {

namespace {

constexpr const char* kHeader =
    "# FP32 GEMMs recorded by the gemmtune cuBLAS drop-in (GEMMTUNE_RECORD): the row-major view, M x N x K of\n"
    "# C = op(A)·op(B), layout and batch; the weight is the estimated time spent, in ms. Lines of one problem\n"
    "# add up. Tune them with: gemmtune tune --shapes THIS_FILE\n";

std::string problemText(const GemmShape& s) {
  return fmt::format("{}x{}x{} {} batch={}", s.M, s.N, s.K, s.layout.text(), s.batch);
}

// Writes all of `text` at the end of `fd`; false with errno set.
bool writeAll(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

CallRecorder::CallRecorder(std::string path, Estimate estimate, library::Warnings& warnings,
                           std::chrono::steady_clock::duration period)
    : path_(std::move(path)), estimate_(std::move(estimate)), warnings_(warnings), period_(period),
      lastFlush_(std::chrono::steady_clock::now()), ownerPid_(::getpid()) {}

void CallRecorder::count(const GemmShape& shape) noexcept {
  if (::getpid() != ownerPid_) return;
  try {
    std::lock_guard lock(mutex_);
    Counted& c = counted_[problemText(shape)];
    if (c.calls == 0 && !(c.msPerCall > 0)) {
      c.shape = shape;
      c.msPerCall = estimate_(shape);
      if (!(c.msPerCall > 0)) c.msPerCall = 1e-3;  // a weight must be positive
    }
    ++c.calls;
    if (std::chrono::steady_clock::now() - lastFlush_ >= period_) flushLocked();
  } catch (...) {  // out of memory: this call goes unrecorded, the program goes on
  }
}

void CallRecorder::flush() noexcept {
  if (::getpid() != ownerPid_) return;
  try {
    std::lock_guard lock(mutex_);
    flushLocked();
  } catch (...) {
  }
}

void CallRecorder::flushLocked() {
  lastFlush_ = std::chrono::steady_clock::now();
  std::string lines;
  for (const auto& [text, c] : counted_)
    if (c.calls > 0) lines += fmt::format("{} {:.6g}  # calls={}\n", text, c.msPerCall * double(c.calls), c.calls);
  if (lines.empty()) return;
  const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  bool ok = fd >= 0;
  if (ok) {
    while (::flock(fd, LOCK_EX) != 0 && errno == EINTR) {
    }
    struct stat st{};
    if (::fstat(fd, &st) == 0 && st.st_size == 0) lines = kHeader + lines;
    ok = writeAll(fd, lines);
  }
  const int error = errno;
  if (fd >= 0) ::close(fd);  // closing releases the lock
  if (!ok) {
    warnings_.once("record-file", fmt::format("gemmtune drop-in: cannot write the record file {} ({}); the counts "
                                              "are kept for the next attempt",
                                              path_, std::strerror(error)));
    return;
  }
  for (auto& [text, c] : counted_) c.calls = 0;
}

}  // namespace gemmtune::dropin
