gemmtune_add_test(size_spec_test SOURCES size_spec_test.cpp LIBS gemmtune_tuner)
gemmtune_add_test(tune_report_test SOURCES tune_report_test.cpp LIBS gemmtune_tuner)
gemmtune_add_test(cuda_driver_test SOURCES cuda_driver_test.cpp LIBS gemmtune_tuner)
# The engine on a GPU: faults inside a run, resume after pruning, `tune` killed and resumed.
gemmtune_add_test(engine_gpu_test SOURCES engine_gpu_test.cpp engine_cli_process.cpp engine_db_checks.cpp
                  LIBS gemmtune_tuner gemmtune_serving GPU)
gemmtune_add_test(engine_checks_test SOURCES engine_checks_test.cpp engine_cli_process.cpp engine_db_checks.cpp
                  LIBS gemmtune_tuner gemmtune_serving)
# The engine on a simulated GPU (fake_worker's table mode): search and sharding without a GPU.
gemmtune_add_test(engine_sim_test SOURCES engine_sim_test.cpp CliRunner.cpp engine_cli_process.cpp LIBS gemmtune_tuner gemmtune_serving)
gemmtune_add_test(engine_sim_retime_test SOURCES engine_sim_retime_test.cpp CliRunner.cpp LIBS gemmtune_tuner gemmtune_serving)
foreach(t engine_sim_test engine_sim_retime_test)
  target_compile_definitions(${t} PRIVATE GEMMTUNE_FAKE_WORKER="$<TARGET_FILE:fake_worker>")
  add_dependencies(${t} fake_worker)
endforeach()
# `tune` killed at random points and resumed, on the simulated GPU: exactly what one run finds.
gemmtune_add_test(engine_sim_resume_test SOURCES engine_sim_resume_test.cpp engine_cli_process.cpp engine_db_checks.cpp
                  LIBS gemmtune_tuner gemmtune_serving)
target_compile_definitions(engine_sim_resume_test PRIVATE GEMMTUNE_FAKE_WORKER="$<TARGET_FILE:fake_worker>")
add_dependencies(engine_sim_resume_test fake_worker)
# The engine across layouts and batches on the simulated GPU.
gemmtune_add_test(engine_layouts_test SOURCES engine_layouts_test.cpp LIBS gemmtune_tuner)
target_compile_definitions(engine_layouts_test PRIVATE GEMMTUNE_FAKE_WORKER="$<TARGET_FILE:fake_worker>")
add_dependencies(engine_layouts_test fake_worker)
# cuBLAS as a candidate: its verified rows beside every size, on the simulated GPU.
gemmtune_add_test(engine_cublas_test SOURCES engine_cublas_test.cpp LIBS gemmtune_tuner)
target_compile_definitions(engine_cublas_test PRIVATE GEMMTUNE_FAKE_WORKER="$<TARGET_FILE:fake_worker>")
add_dependencies(engine_cublas_test fake_worker)

# The search-quality bench on the simulated GPU: exhaustive, model and random run end to end, and
# the model search picks the fastest at the size where the small size ranks it low, head to head
# against the random baseline's pick (the line with a time in ms).
if(TARGET search_quality)
  add_test(NAME searchQuality.SimulatedGpuModelFindsTheExhaustiveWinner
           COMMAND search_quality --simulate $<TARGET_FILE:fake_worker> --families blocktile2d --sizes 256,2048 --carry 4)
  set_tests_properties(searchQuality.SimulatedGpuModelFindsTheExhaustiveWinner PROPERTIES LABELS cpu
                       PASS_REGULAR_EXPRESSION "model +2048 +blocktile2d +0\\.[0-9]+ +1\\.000")
  # Exhaustive at the large size only (what fits one GPU command at 8192): the model still learns
  # at 256 and is judged at 2048.
  # Built over two commands (--work): exhaustive alone first, then the strategies against its
  # resumed store.
  add_test(NAME searchQuality.ExhaustiveAtTheLargeSizeOnly
           COMMAND sh -c "rm -rf sq-work && $0 $@ --strategies '' && $0 $@"
                   $<TARGET_FILE:search_quality> --simulate $<TARGET_FILE:fake_worker> --families blocktile2d
                   --sizes 256,2048 --exhaustive-sizes 2048 --carry 4 --work sq-work)
  set_tests_properties(searchQuality.ExhaustiveAtTheLargeSizeOnly PROPERTIES LABELS cpu
                       PASS_REGULAR_EXPRESSION "model +256 +blocktile2d +[0-9]+ +- .*model +2048 +blocktile2d +[0-9]+ +1\\.000")
endif()
# The basis shapes after the requested sizes, on the simulated GPU.
gemmtune_add_test(engine_basis_test SOURCES engine_basis_test.cpp CliRunner.cpp LIBS gemmtune_tuner)
target_compile_definitions(engine_basis_test PRIVATE GEMMTUNE_FAKE_WORKER="$<TARGET_FILE:fake_worker>")
add_dependencies(engine_basis_test fake_worker)
