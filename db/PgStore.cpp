// SqlStore instantiated over PostgreSQL (db::PgConnection): a results store many tuners share.
#include "PgConnection.hpp"
#include "SqlStoreImpl.hpp"

namespace gemmtune::db {

template class SqlStore<PgConnection, PgTransaction>;

}  // namespace gemmtune::db
