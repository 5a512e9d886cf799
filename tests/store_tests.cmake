# The results-store interface on SQLite and on a PostgreSQL server the test starts itself.
gemmtune_add_test(store_test SOURCES store_test.cpp LIBS gemmtune_serving gemmtune_db gemmtune_generator)
# Deployment snapshots (`db snapshot`) and the library's list of stores.
gemmtune_add_test(snapshot_test SOURCES snapshot_test.cpp CliRunner.cpp LIBS gemmtune_library_objects)
