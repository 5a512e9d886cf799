// CompileCache: CompileResults on disk under a content hash of everything that changes NVRTC's
// output (exact source, name expression, options, arch, NVRTC version). Entries are written to a
// temporary file and renamed into place, so concurrent processes can share one directory.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "CompileResult.hpp"
#include "CompileUnit.hpp"

namespace gemmtune {

class CompileCache {
 public:
  // $XDG_CACHE_HOME/gemmtune, else $HOME/.cache/gemmtune.
  static std::filesystem::path defaultDir();

  // An empty `dir` disables the cache (every lookup misses, stores are dropped).
  explicit CompileCache(std::filesystem::path dir) : dir_(std::move(dir)) {}

  static std::string key(const CompileUnit& unit, const std::string& arch);

  std::optional<CompileResult> load(const std::string& key, const std::string& arch) const;
  // Never throws: a cache that cannot be written only costs speed (logged at debug level).
  void store(const std::string& key, const CompileResult& result) const;
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path pathFor(const std::string& key, const std::string& arch) const;
  std::filesystem::path dir_;
};

}  // namespace gemmtune
