// Planner: which configuration runs for a GPU and a problem, from results stores that are
// treated as untrusted input. Several stores may be given, highest precedence first (a user
// database, then a read-only system snapshot): an exact answer from the first store that has one
// wins, else a nearest-size answer from the first store that has one. Rows come through serving::Lookup, which re-validates each one; anything
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
struct LookupResult;
}  // namespace gemmtune::serving

namespace gemmtune::library {

struct Plan {
  Config config;            // unused when `cublas`
  bool cublas = false;      // run cuBLAS (CublasRuntime): a cuBLAS row answered
  Choice choice;            // what best() reports
  std::string cubin;        // the measured binary, only when it is exactly `config`
  std::vector<std::string> loweredNames;  // its entry points, main kernel first
  double predictedMs = 0;   // nearest_size: the lookup's predicted time of one call at the asked size
};

// The built-in default configuration (FamilyRegistry::libraryDefault) reading `layout`: correct
// for any problem of that layout.
Config defaultConfig(const Layout& layout = {});

// Why Library::Options::measuredWinsOnly leaves `plan` for `problem` to the caller: cuBLAS's row,
// no exact measured row, no cuBLAS measurement there, a row that did not beat cuBLAS's measured
// time, or operands (leading dimensions, alignment) its measured form cannot run (another form
// is another kernel); empty when the library runs it.
std::string notAMeasuredWin(const Plan& plan, const GemmProblem& problem);

class Planner {
 public:
  // An empty path means $GEMMTUNE_DB, else the XDG default; the system snapshot is consulted
  // after it: $GEMMTUNE_SYSTEM_DB, else an installed <prefix>/share/gemmtune/system.db
  // (library/SystemSnapshot.hpp).
  // `cublas`: cuBLAS's rows may answer (Library::Options::cublas); false: gemmtune's kernels only.
  Planner(const std::filesystem::path& dbPath, Warnings& warnings, bool cublas = true);
  // Exactly these store locations, highest precedence first (empty: as above).
  // `measuredWinsOnly` (Library::Options) changes only what the warnings say the library does.
  // `precision`: the most the lookups serve (Library::Options::precision).
  Planner(const std::vector<std::string>& locations, Warnings& warnings, bool cublas = true,
          bool measuredWinsOnly = false, PrecisionClass precision = PrecisionClass::strict);
  ~Planner();

  // `allowCublas` false: gemmtune's kernels only even where cuBLAS may answer (cuBLAS could not
  // be loaded here).
  Plan plan(const GpuSpec& gpu, const GemmShape& shape, bool allowCublas = true);
  // The default configuration for `layout`, with `why` as the choice's note.
  static Plan fallback(std::string why, const Layout& layout);

 private:
  struct Source {
    std::string location;  // as given; messages mask it
    std::unique_ptr<db::ResultStore> db;
    std::unique_ptr<serving::Lookup> lookup;
    std::unique_ptr<serving::Lookup> kernelsOnly;  // without cuBLAS's rows, made when first asked
    std::string unusable;  // why there is no lookup, for the notes of default choices
  };
  void open(Source& source);
  // `quiet`: no warning now (a missing or empty store among several, when another one is usable).
  void giveUp(Source& source, const std::string& why, bool quiet = false);
  std::string locations() const;
  // What sgemm() does where no row answers: the warnings' second half.
  std::string withoutRows(const Layout& layout) const;
  // The lookup of `source` that answers with or without cuBLAS.
  serving::Lookup& lookupOf(Source& source, bool cublas);
  // The plan a lookup's answer `r` for `shape` gives.
  static Plan planOf(serving::LookupResult& r, const GemmShape& shape);

  Warnings& warnings_;
  bool cublas_;
  bool measuredWinsOnly_;
  PrecisionClass precision_;
  std::mutex mutex_;  // one connection per store; plans are made on first use only
  std::vector<Source> sources_;
};

}  // namespace gemmtune::library
