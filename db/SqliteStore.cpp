// SqlStore instantiated over one SQLite connection (db::Database): the default results store.
#include "SqliteStore.hpp"

#include "SqlStoreImpl.hpp"

namespace gemmtune::db {

template class SqlStore<Database, Transaction>;

}  // namespace gemmtune::db
