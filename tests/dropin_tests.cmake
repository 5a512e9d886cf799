# The cuBLAS drop-in (dropin/): a stand-in cuBLAS, a program written against cuBLAS that links the
# drop-in ahead of it, and the tests that run that program (no GPU needed).
if(TARGET gemmtune_cublas)
  add_library(gemmtune_fake_cublas SHARED dropin_fake_cublas.cpp)
  target_include_directories(gemmtune_fake_cublas PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
  # The drop-in first: its cublasSgemm_v2 and friends are what the program's calls bind to.
  add_executable(gemmtune_dropin_client dropin_client.cpp)
  target_include_directories(gemmtune_dropin_client PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
  target_link_libraries(gemmtune_dropin_client PRIVATE gemmtune_cublas gemmtune_fake_cublas)
  gemmtune_add_test(dropin_test SOURCES dropin_test.cpp CliRunner.cpp
                    LIBS gemmtune_dropin_objects gemmtune_library_objects gemmtune_tuner CLI gemmtune_dropin_client)
  target_compile_definitions(dropin_test PRIVATE GEMMTUNE_FAKE_CUBLAS="$<TARGET_FILE:gemmtune_fake_cublas>")
endif()

# On a GPU: a program written against cuBLAS alone, run with and without the drop-in preloaded.
if(TARGET gemmtune_cublas AND TARGET CUDA::cublas AND TARGET CUDA::cudart)
  add_executable(gemmtune_dropin_cublas_program dropin_cublas_program.cpp)
  target_link_libraries(gemmtune_dropin_cublas_program PRIVATE CUDA::cublas CUDA::cudart Threads::Threads)
  gemmtune_add_test(dropin_gpu_test SOURCES dropin_gpu_test.cpp CliRunner.cpp
                    LIBS gemmtune_device CLI gemmtune_dropin_cublas_program GPU)
  target_compile_definitions(dropin_gpu_test PRIVATE GEMMTUNE_DROPIN="$<TARGET_FILE:gemmtune_cublas>")
  add_dependencies(dropin_gpu_test gemmtune_cublas)
endif()

# What the drop-in exposes to the host program: six entry points, no run path.
if(TARGET gemmtune_cublas)
  add_test(NAME dropin_exports COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/dropin_exports_test.sh $<TARGET_FILE:gemmtune_cublas>)
  set_tests_properties(dropin_exports PROPERTIES LABELS cpu)
endif()
