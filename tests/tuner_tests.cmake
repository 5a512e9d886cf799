# tuner: GPU model, occupancy, candidate space (included from tests/CMakeLists.txt)
gemmtune_add_test(occupancy_test SOURCES occupancy_test.cpp LIBS gemmtune_tuner)
