# Results store (db/): CPU-only, run in CI. One test file per class, plus the CLI commands.
set(db_test_libs gemmtune_db gemmtune_generator)
gemmtune_add_test(db_database_test SOURCES db_database_test.cpp LIBS ${db_test_libs})
