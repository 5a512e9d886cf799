// Planner: which configuration runs for a GPU and a problem, from a results database that is
// treated as untrusted input. Rows come through serving::Lookup, which re-validates each one; anything
// the database cannot answer — no file, a damaged file, no valid row for this GPU — yields the
// built-in default configuration, which is correct for every size. Never throws for the database.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "Family.hpp"
#include "Warnings.hpp"
#include "gemmtune/GpuSpec.hpp"
#include "gemmtune/Library.hpp"

namespace gemmtune::db {
class ResultStore;
}  // namespace gemmtune::db
namespace gemmtune::serving {
class Lookup;
}  // namespace gemmtune::serving

namespace gemmtune::library {

struct Plan {
  Config config;
  Choice choice;            // what best() reports
  std::string cubin;        // the measured binary, only when it is exactly `config`
  std::vector<std::string> loweredNames;  // its entry points, main kernel first
};

// The built-in default configuration (FamilyRegistry::libraryDefault): correct for any problem.
Config defaultConfig();

class Planner {
 public:
  // An empty path means $GEMMTUNE_DB, else the XDG default.
  Planner(const std::filesystem::path& dbPath, Warnings& warnings);
  ~Planner();

  Plan plan(const GpuSpec& gpu, long long M, long long N, long long K);
  // The default configuration, with `why` as the choice's note.
  static Plan fallback(std::string why);

 private:
  void open(const std::filesystem::path& dbPath);
  void giveUp(const std::string& why);

  Warnings& warnings_;
  std::mutex mutex_;  // one SQLite connection; plans are made on first use only
  std::filesystem::path path_;
  std::unique_ptr<db::ResultStore> db_;
  std::unique_ptr<serving::Lookup> lookup_;
  std::string unusable_;  // why there is no lookup_, for the notes of default choices
};

}  // namespace gemmtune::library
