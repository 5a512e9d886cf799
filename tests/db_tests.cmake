# Results store (db/): CPU-only, run in CI. One test file per class, plus the CLI commands.
set(db_test_libs gemmtune_serving gemmtune_db gemmtune_generator)
gemmtune_add_test(db_database_test SOURCES db_database_test.cpp LIBS ${db_test_libs})
gemmtune_add_test(db_store_test SOURCES db_store_test.cpp LIBS ${db_test_libs})
gemmtune_add_test(db_batch_test SOURCES db_batch_test.cpp LIBS ${db_test_libs})
gemmtune_add_test(db_lookup_test SOURCES db_lookup_test.cpp LIBS ${db_test_libs})
gemmtune_add_test(db_exchange_test SOURCES db_exchange_test.cpp LIBS ${db_test_libs})
gemmtune_add_test(db_stale_rows_test SOURCES db_stale_rows_test.cpp LIBS ${db_test_libs})
gemmtune_add_test(db_concurrency_test SOURCES db_concurrency_test.cpp LIBS ${db_test_libs})
gemmtune_add_test(db_cli_test SOURCES db_cli_test.cpp CliRunner.cpp LIBS ${db_test_libs})
gemmtune_add_test(slurm_example_test SOURCES slurm_example_test.cpp CliRunner.cpp LIBS ${db_test_libs})
# Its sweep runs on the tests' simulated GPU ($GEMMTUNE_SIMULATED_GPU / _WORKER).
target_compile_definitions(slurm_example_test PRIVATE GEMMTUNE_FAKE_WORKER="$<TARGET_FILE:fake_worker>")
add_dependencies(slurm_example_test fake_worker)
