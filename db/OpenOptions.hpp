// OpenOptions: how a results store is opened, whatever its backend (db/ResultStore openStore).
#pragma once

namespace gemmtune::db {

enum class OpenMode {
  ReadOnly,   // never writes; a missing SQLite file is an IoError
  ReadWrite,  // creates the store when missing, migrates the schema
};

enum class OpenCheck {
  Quick,   // SQLite: PRAGMA quick_check, O(size of the file), catches damage before the first query
  Header,  // only the header, application_id and schema version: for latency-critical lookups
};

struct OpenOptions {
  OpenMode mode = OpenMode::ReadOnly;
  OpenCheck check = OpenCheck::Quick;
  int busyTimeoutMs = 30000;
  // ReadWrite: upgrade an older schema in place. False refuses one (DataError) untouched — for
  // the library, which writes the shapes it served but leaves upgrades to gemmtune's commands.
  bool migrate = true;
};

}  // namespace gemmtune::db
