// PendingFiles: files being written that are not complete yet (a temporary export, a backup in
// progress and its journal). SIGINT, SIGTERM, SIGHUP and SIGPIPE remove them before the process
// dies, so an interrupted command leaves only complete files behind (issue 13, defect 7).
#pragma once

#include <filesystem>

namespace gemmtune {

// Registers `path` for removal if the process is killed by one of those signals while the guard
// lives; the destructor removes the file too unless keep() was called (the file is complete).
class PendingFile {
 public:
  explicit PendingFile(const std::filesystem::path& path);
  ~PendingFile();
  PendingFile(const PendingFile&) = delete;
  PendingFile& operator=(const PendingFile&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // The file was renamed into place or is otherwise complete: leave it.
  void keep();

 private:
  std::filesystem::path path_;
  int slot_ = -1;
};

}  // namespace gemmtune
