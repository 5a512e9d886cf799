// Fuzz target: opening and reading a database file of any content (db/Database, ResultStore).
// The bytes become a file that is opened read-only with the quick check, then read as every
// command reads it. Damage must surface as a gemmtune error (exit 65 or 74), never a crash.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "Database.hpp"
#include "SqliteStore.hpp"
#include "gemmtune/Errors.hpp"
#include "FuzzTarget.hpp"
#include "ParamsJson.hpp"
#include "ResultStore.hpp"

namespace {

std::filesystem::path scratchFile() {
  static const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("gemmtune-fuzz-db-" + std::to_string(::getpid()) + ".db");
  return path;
}

void removeScratch() {
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"})
    std::filesystem::remove(scratchFile().string() + suffix, ec);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gemmtune::db;
  removeScratch();
  {
    std::ofstream out(scratchFile(), std::ios::binary);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    Database database(scratchFile(), {OpenMode::ReadOnly, OpenCheck::Quick, 0});
    if (database.hasSchema()) {
      (void)database.integrityCheck();
      SqliteStore store(database);
      (void)store.gpus();
      (void)store.runs();
      for (const auto& r : store.results(ResultFilter{})) (void)paramsForOutput(r.params).dump();
      (void)store.baselines();
    }
  } catch (const gemmtune::Error&) {
  }
  removeScratch();
  return 0;
}
