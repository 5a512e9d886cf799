# gemmtune::Library: planning from a fixture database, argument checks and the no-GPU status, the
# checks on stored binaries (cpu); the installed package built into a consumer (cpu); sgemm()
# against cuBLAS, concurrency and dispatch overhead on a GPU (gpu).
set(library_test_libs gemmtune_library_objects)
gemmtune_add_test(library_best_test SOURCES library_best_test.cpp LIBS ${library_test_libs})
gemmtune_add_test(library_sgemm_test SOURCES library_sgemm_test.cpp LIBS ${library_test_libs})
gemmtune_add_test(library_measured_wins_test SOURCES library_measured_wins_test.cpp LIBS ${library_test_libs})
gemmtune_add_test(precision_test SOURCES precision_test.cpp LIBS ${library_test_libs})
gemmtune_add_test(library_cubin_check_test SOURCES library_cubin_check_test.cpp LIBS ${library_test_libs})
# The record of shapes served without an exact row: counting, flushing, the store sink (cpu).
gemmtune_add_test(library_seen_test SOURCES library_seen_test.cpp LIBS ${library_test_libs})
gemmtune_add_test(library_seen_gpu_test SOURCES library_seen_gpu_test.cpp LIBS ${library_test_libs} GPU)
# cuBLAS, the reference, comes from the tuner's worker: only this test links the tuner.
# sgemm() under CUDA graph capture: declined until prepared, then captured and replayed (gpu).
gemmtune_add_test(library_capture_gpu_test SOURCES library_capture_gpu_test.cpp LIBS ${library_test_libs} GPU)
gemmtune_add_test(library_gpu_test SOURCES library_gpu_test.cpp LIBS ${library_test_libs} gemmtune_tuner GPU)
gemmtune_add_test(library_layouts_gpu_test SOURCES library_layouts_gpu_test.cpp LIBS ${library_test_libs} GPU)

# Installs this build tree into a scratch prefix, then configures, builds and runs
# examples/consumer against it: the package works the way a user would take it. Not under
# GEMMTUNE_SANITIZE: the consumer is built without the sanitizer runtime the library then needs.
if(NOT GEMMTUNE_SANITIZE)
add_test(NAME library_install_test
  COMMAND ${CMAKE_COMMAND}
    -DBUILD_DIR=${PROJECT_BINARY_DIR}
    -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
    -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/library_install
    -DGENERATOR=${CMAKE_GENERATOR}
    -DCXX_COMPILER=${CMAKE_CXX_COMPILER}
    -P ${CMAKE_CURRENT_SOURCE_DIR}/library_install_test.cmake)
set_tests_properties(library_install_test PROPERTIES LABELS cpu TIMEOUT 600)
endif()
# cuBLAS as a candidate without a GPU: its rows' staleness, the lookup's exact answers, best().
gemmtune_add_test(cublas_rows_test SOURCES cublas_rows_test.cpp LIBS ${library_test_libs})
