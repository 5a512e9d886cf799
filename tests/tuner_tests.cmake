# tuner: GPU model, occupancy, candidate space (included from tests/CMakeLists.txt)
gemmtune_add_test(occupancy_test SOURCES occupancy_test.cpp LIBS gemmtune_tuner)
gemmtune_add_test(gpu_profiles_test SOURCES gpu_profiles_test.cpp LIBS gemmtune_tuner)
gemmtune_add_test(candidate_filter_test SOURCES candidate_filter_test.cpp LIBS gemmtune_tuner)
gemmtune_add_test(tuner_cli_test SOURCES tuner_cli_test.cpp CliRunner.cpp LIBS gemmtune_tuner)
gemmtune_add_test(space_gpu_test SOURCES space_gpu_test.cpp LIBS gemmtune_tuner GPU)
gemmtune_add_test(workspace_gpu_test SOURCES workspace_gpu_test.cpp LIBS gemmtune_tuner GPU)
gemmtune_add_test(shape_file_test SOURCES shape_file_test.cpp LIBS gemmtune_tuner)
gemmtune_add_test(shard_test SOURCES shard_test.cpp CliRunner.cpp LIBS gemmtune_tuner)
gemmtune_add_test(bench_workload_test SOURCES bench_workload_test.cpp ${PROJECT_SOURCE_DIR}/bench/gemm/BenchReport.cpp
                  ${PROJECT_SOURCE_DIR}/bench/gemm/WorkloadSummary.cpp LIBS gemmtune_tuner gemmtune_serving)
target_include_directories(bench_workload_test PRIVATE ${PROJECT_SOURCE_DIR}/bench/gemm)
# tune --params runs on the tests' simulated GPU ($GEMMTUNE_SIMULATED_GPU / _WORKER).
target_compile_definitions(tuner_cli_test PRIVATE GEMMTUNE_FAKE_WORKER="$<TARGET_FILE:fake_worker>")
add_dependencies(tuner_cli_test fake_worker)
# `gemmtune seen` and `tune --seen` on shapes the library recorded, on the simulated H100.
gemmtune_add_test(seen_cli_test SOURCES seen_cli_test.cpp CliRunner.cpp LIBS gemmtune_tuner)
target_compile_definitions(seen_cli_test PRIVATE GEMMTUNE_FAKE_WORKER="$<TARGET_FILE:fake_worker>")
add_dependencies(seen_cli_test fake_worker)
