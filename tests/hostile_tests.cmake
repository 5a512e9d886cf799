# Hostile input and output (issue 13): the regression tests of the fuzzing campaign's defects,
# and the fuzz targets replayed over their seed corpus (fuzz/).
gemmtune_add_test(output_file_test SOURCES output_file_test.cpp LIBS gemmtune_serving gemmtune_db gemmtune_generator)
gemmtune_add_test(hostile_cli_test SOURCES hostile_cli_test.cpp CliRunner.cpp
                  LIBS gemmtune_serving gemmtune_db gemmtune_generator)
include(${PROJECT_SOURCE_DIR}/fuzz/targets.cmake)
