# The results-store interface on SQLite and on a PostgreSQL server the test starts itself.
gemmtune_add_test(store_test SOURCES store_test.cpp LIBS gemmtune_serving gemmtune_db gemmtune_generator)
# Deployment snapshots (`db snapshot`) and the library's list of stores.
gemmtune_add_test(snapshot_test SOURCES snapshot_test.cpp CliRunner.cpp LIBS gemmtune_library_objects)
# Readers during writes, a server restarted mid-write, export and import on both backends.
gemmtune_add_test(store_readers_test SOURCES store_readers_test.cpp LIBS gemmtune_serving gemmtune_db gemmtune_generator)
gemmtune_add_test(store_reconnect_test SOURCES store_reconnect_test.cpp LIBS gemmtune_db gemmtune_generator gemmtune_serving)
gemmtune_add_test(store_exchange_test SOURCES store_exchange_test.cpp CliRunner.cpp LIBS gemmtune_serving gemmtune_db gemmtune_generator)
# Schema 1 (before batches) migrated in place on both backends, and read as schema 2 read-only.
gemmtune_add_test(store_migration_test SOURCES store_migration_test.cpp LIBS gemmtune_serving gemmtune_db gemmtune_generator)
# The library's record of shapes served without an exact row (schema 3) on both backends.
gemmtune_add_test(store_seen_test SOURCES store_seen_test.cpp LIBS gemmtune_serving gemmtune_db gemmtune_generator)
