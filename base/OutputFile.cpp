#include "OutputFile.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "gemmtune/Errors.hpp"
#include "PendingFiles.hpp"
#include "Quote.hpp"

namespace gemmtune {

namespace {

// What is written where, as the user named it: every failure message says both.
struct Target {
  const std::filesystem::path& path;
  std::string_view what;  // "the report"
};

[[noreturn]] void fail(const Target& target, const std::string& why) {
  throw IoError("cannot write " + std::string(target.what) + " to " + quoteInput(target.path.string()) + ": " + why);
}

// Writes everything or returns the errno of the first failure (0 on success).
int writeAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return 0;
}

// The file a chain of symlinks ends at (it may not exist yet); the link itself is kept.
std::filesystem::path followLinks(std::filesystem::path p) {
  std::error_code ec;
  for (int hops = 0; hops < 40 && std::filesystem::is_symlink(p, ec); ++hops) {
    auto next = std::filesystem::read_symlink(p, ec);
    if (ec) break;
    p = next.is_absolute() ? next : p.parent_path() / next;
  }
  return p;
}

void writeInPlace(const Target& target, const std::filesystem::path& file, std::string_view bytes) {
  int fd = ::open(file.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) fail(target, std::strerror(errno));
  int err = writeAll(fd, bytes);
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err) fail(target, std::strerror(err));
}

void writeReplacing(const Target& target, const std::filesystem::path& file, std::string_view bytes,
                    mode_t mode) {
  std::filesystem::path tmp = file;
  tmp += ".tmp" + std::to_string(::getpid());
  PendingFile pending(tmp);  // registered before it exists: no window for a signal to leave it
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) fail(target, std::strerror(errno));
  int err = writeAll(fd, bytes);
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err) fail(target, std::strerror(err));
  if (::rename(tmp.c_str(), file.c_str()) != 0) fail(target, std::strerror(errno));
  pending.keep();
}

}  // namespace

void writeStdout(std::string_view bytes, std::string_view what) {
  std::size_t n = std::fwrite(bytes.data(), 1, bytes.size(), stdout);
  if (n != bytes.size() || std::fflush(stdout) != 0)
    throw IoError("cannot write " + std::string(what) + " to standard output: " + std::strerror(errno));
}

void writeOutputFile(const std::filesystem::path& target, std::string_view bytes, std::string_view what) {
  if (target == "-") return writeStdout(bytes, what);
  const Target named{target, what};
  const std::filesystem::path file = followLinks(target);
  struct stat st {};
  if (::stat(file.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) {
      if (S_ISDIR(st.st_mode)) fail(named, "it is a directory");
      return writeInPlace(named, file, bytes);
    }
    return writeReplacing(named, file, bytes, st.st_mode & 07777);
  }
  if (errno != ENOENT) fail(named, std::strerror(errno));
  writeReplacing(named, file, bytes, 0666);  // the umask applies, as for any new file
}

}  // namespace gemmtune
