# Fuzz targets (issue 13): the size grammar, the shapes file, instance names and --params, the import reader and
# opening a database file. Each target is one LLVMFuzzerTestOneInput with a seed corpus under
# corpus/<target>/. Always built as a CTest test that replays the corpus plus seeded mutations
# (any compiler); with -DGEMMTUNE_FUZZ=ON (clang) also as a libFuzzer binary fuzz_<target>,
# which scripts/fuzz runs for a bounded time (docs: fuzz/README.md). Included from tests/, where
# GoogleTest and gemmtune_add_test are defined.
set(fuzz_dir ${PROJECT_SOURCE_DIR}/fuzz)
set(fuzz_libs gemmtune_db gemmtune_generator)
set(fuzz_targets size_spec shape_file params import_json db_open)
# The size grammar lives in the tuner library, which carries the GPU worker; its one file is
# compiled in instead.
set(size_spec_extra ${PROJECT_SOURCE_DIR}/tuner/SizeSpec.cpp)
set(shape_file_extra ${PROJECT_SOURCE_DIR}/tuner/ShapeFile.cpp ${PROJECT_SOURCE_DIR}/tuner/SizeSpec.cpp)

foreach(target IN LISTS fuzz_targets)
  set(sources ${fuzz_dir}/${target}_fuzz.cpp ${${target}_extra})
  gemmtune_add_test(fuzz_${target}_replay SOURCES ${sources} ${fuzz_dir}/FuzzReplayTest.cpp LIBS ${fuzz_libs})
  target_include_directories(fuzz_${target}_replay PRIVATE ${fuzz_dir} ${PROJECT_SOURCE_DIR}/tuner)
  target_compile_definitions(fuzz_${target}_replay PRIVATE
    GEMMTUNE_FUZZ_CORPUS="${fuzz_dir}/corpus/${target}" GEMMTUNE_FUZZ_SUITE=fuzz_${target})
  if(GEMMTUNE_FUZZ)
    add_executable(fuzz_${target} ${sources})
    target_include_directories(fuzz_${target} PRIVATE ${fuzz_dir} ${PROJECT_SOURCE_DIR}/tuner)
    target_link_libraries(fuzz_${target} PRIVATE ${fuzz_libs} gemmtune_warnings)
    target_link_options(fuzz_${target} PRIVATE -fsanitize=fuzzer)
  endif()
endforeach()
