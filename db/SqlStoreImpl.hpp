// SqlStore's definitions: every query of the results store, written once for both backends.
// Included only by the files that instantiate SqlStore (SqliteStore.cpp, PgStore.cpp). The
// queries live by job in SqlStoreColumns.hpp (result rows), SqlStoreGpusRuns.hpp,
// SqlStoreWrites.hpp, SqlStoreReads.hpp and SqlStoreSeen.hpp (the library's recorded problems);
// here are the constructors and the retry of a call whose connection was lost.
#pragma once

#include "Log.hpp"
#include "SqlStore.hpp"
#include "SqlStoreColumns.hpp"
#include "SqlStoreGpusRuns.hpp"
#include "SqlStoreReads.hpp"
#include "SqlStoreSeen.hpp"
#include "SqlStoreWrites.hpp"

namespace gemmtune::db {

template <class Conn, class Tx>
SqlStore<Conn, Tx>::SqlStore(Conn& conn) : db_(conn), location_(conn.location()) {}

template <class Conn, class Tx>
SqlStore<Conn, Tx>::SqlStore(std::unique_ptr<Conn> conn)
    : owned_(std::move(conn)), db_(*owned_), location_(owned_->location()) {}

template <class Conn, class Tx>
bool SqlStore<Conn, Tx>::hasSchema() const {
  return db_.hasSchema();
}

template <class Conn, class Tx>
template <class Call>
auto SqlStore<Conn, Tx>::retried(Call&& call) const -> decltype(call()) {
  if constexpr (requires(Conn& c) { c.reconnect(); }) {
    // Only the outermost call retries: an inner one is part of its transaction or view, which
    // died with the connection.
    if (views_ > 0 || calls_ > 0) return call();
    struct Depth {
      int& n;
      explicit Depth(int& count) : n(count) { ++n; }
      ~Depth() { --n; }
    };
    try {
      Depth depth(calls_);
      return call();
    } catch (const StoreConnectionLost& e) {
      logger()->warn("{}: {}; reconnecting", location_, e.what());
      db_.reconnect();  // throws StoreConnectionLost saying what to do when the server stays away
      Depth depth(calls_);
      return call();
    }
  } else {
    return call();
  }
}

}  // namespace gemmtune::db
