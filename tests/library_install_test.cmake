# The installed package as a user gets it: `cmake --install` this build tree into a scratch
# prefix, check what landed there, then configure, build and run examples/consumer against it.
# Without a GPU the consumer must exit 0 after a "no GPU" line; with one it must compute exactly.
# Inputs: BUILD_DIR, SOURCE_DIR, WORK_DIR, GENERATOR, CXX_COMPILER.
cmake_minimum_required(VERSION 3.25)

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(step_output "${out}${err}" PARENT_SCOPE)
endfunction()

set(prefix ${WORK_DIR}/prefix)
set(consumer_build ${WORK_DIR}/consumer)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

run_step("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

foreach(f include/gemmtune/Library.hpp include/gemmtune/GpuSpec.hpp include/gemmtune/Precision.hpp include/gemmtune/Errors.hpp bin/gemmtune)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()
file(GLOB_RECURSE config_files ${prefix}/*/gemmtuneConfig.cmake)
file(GLOB_RECURSE libraries ${prefix}/*/libgemmtune.so)
if(NOT config_files OR NOT libraries)
  message(FATAL_ERROR "not installed: gemmtuneConfig.cmake (${config_files}) or libgemmtune.so (${libraries})")
endif()

# The driver and NVRTC are loaded at run time; a link to the driver would stop the library loading
# without a GPU, one to NVRTC would tie it to the toolkit's copy.
find_program(READELF readelf)
if(READELF)
  foreach(binary ${libraries} ${prefix}/bin/gemmtune)
    run_step("readelf" ${READELF} -d ${binary})
    if(step_output MATCHES "libcuda\\.so|libnvrtc")
      message(FATAL_ERROR "${binary} links the CUDA driver or NVRTC:\n${step_output}")
    endif()
  endforeach()
endif()

run_step("installed gemmtune --help" ${prefix}/bin/gemmtune --help)

# The pinned dependencies fetched into this build tree (scripts/fetch-deps.sh) are installed, and
# the installed program prefers its own NVRTC to the build tree's.
if(EXISTS ${BUILD_DIR}/deps/nvrtc/lib/libnvrtc.so.13)
  file(GLOB_RECURSE installed_nvrtc ${prefix}/*/gemmtune/nvrtc/libnvrtc.so.13)
  file(GLOB_RECURSE installed_builtins ${prefix}/*/gemmtune/nvrtc/libnvrtc-builtins.so.13.5)
  if(NOT installed_nvrtc OR NOT installed_builtins)
    message(FATAL_ERROR "not installed: gemmtune/nvrtc/libnvrtc.so.13 and libnvrtc-builtins.so.13.5")
  endif()
  run_step("installed gemmtune --version" ${CMAKE_COMMAND} -E env --unset=GEMMTUNE_NVRTC ${prefix}/bin/gemmtune --version)
  string(FIND "${step_output}" "NVRTC 13.5 from ${installed_nvrtc} (installed)" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the installed gemmtune does not use ${installed_nvrtc}:\n${step_output}")
  endif()
endif()
if(EXISTS ${BUILD_DIR}/deps/cutlass/include/cutlass/version.h AND
   NOT EXISTS ${prefix}/share/gemmtune/cutlass/include/cutlass/version.h)
  message(FATAL_ERROR "not installed: share/gemmtune/cutlass/include/cutlass/version.h")
endif()

run_step("configure the consumer" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/consumer -B ${consumer_build}
         -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
run_step("build the consumer" ${CMAKE_COMMAND} --build ${consumer_build})

# A database path that does not exist: the consumer must not depend on this machine's results.
run_step("run the consumer" ${CMAKE_COMMAND} -E env GEMMTUNE_DB=${WORK_DIR}/no-such.db
         ${consumer_build}/gemmtune_consumer 256)
message(STATUS "consumer said:\n${step_output}")
if(NOT (step_output MATCHES "no GPU: best\\(\\) threw NoGpuError" AND step_output MATCHES "no GPU: sgemm\\(\\) returned no_gpu")
   AND NOT step_output MATCHES "sgemm 256x256x256: ok")
  message(FATAL_ERROR "unexpected consumer output:\n${step_output}")
endif()
