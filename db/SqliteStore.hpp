// SqliteStore: the results store in one SQLite file (the default), over db::Database.
#pragma once

#include "Database.hpp"
#include "SqlStore.hpp"

namespace gemmtune::db {

using SqliteStore = SqlStore<Database, Transaction>;
extern template class SqlStore<Database, Transaction>;

}  // namespace gemmtune::db
