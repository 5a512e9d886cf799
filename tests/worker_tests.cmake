# GPU worker: protocol and pure parts (cpu), the client against fake workers (cpu), and the
# worker itself on a GPU: verification, timing, faults (gpu).
add_executable(fake_worker fake_worker.cpp)
target_link_libraries(fake_worker PRIVATE gemmtune_tuner gemmtune_warnings)

gemmtune_add_test(worker_protocol_test SOURCES worker_protocol_test.cpp LIBS gemmtune_tuner)
gemmtune_add_test(worker_client_test SOURCES worker_client_test.cpp CliRunner.cpp LIBS gemmtune_tuner)
target_compile_definitions(worker_client_test PRIVATE GEMMTUNE_FAKE_WORKER="$<TARGET_FILE:fake_worker>")
add_dependencies(worker_client_test fake_worker)

gemmtune_add_test(worker_gpu_test SOURCES worker_gpu_test.cpp LIBS gemmtune_tuner GPU)
# Every built-in family in every layout and batch form (the gate for the templates' layout work).
gemmtune_add_test(layouts_gpu_test SOURCES layouts_gpu_test.cpp LIBS gemmtune_tuner GPU)
# The faithful precision class's checks: FP64 reference, error sets against cuBLAS, Inf/NaN, tf32x3.
gemmtune_add_test(faithful_gpu_test SOURCES faithful_gpu_test.cpp LIBS gemmtune_tuner GPU)
# The timer: the GPU's time alone (LaunchGate), and no hang when a launch waits for its stream.
gemmtune_add_test(timer_gpu_test SOURCES timer_gpu_test.cpp LIBS gemmtune_tuner GPU)
# cuBLASLt's algorithm configurations: their names (cpu); listed and run against cuBLAS (gpu).
gemmtune_add_test(cublaslt_algo_test SOURCES cublaslt_algo_test.cpp LIBS gemmtune_device)
gemmtune_add_test(cublaslt_gpu_test SOURCES cublaslt_gpu_test.cpp LIBS gemmtune_tuner GPU)
