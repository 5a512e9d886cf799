# The pinned run-time dependencies that scripts/fetch-deps.sh unpacks into ${CMAKE_BINARY_DIR}/deps
# before configuring (scripts/build.sh does): NVRTC 13.5 (nvrtc/lib/) and the CUTLASS headers
# (cutlass/include/). Neither is needed to build; both are found at run time. `cmake --install`
# copies whatever has been fetched by then:
#   nvrtc/lib/*        -> ${CMAKE_INSTALL_LIBDIR}/gemmtune/nvrtc/    (NvrtcLibrary looks there)
#   cutlass/include/   -> ${CMAKE_INSTALL_DATADIR}/gemmtune/cutlass/include/
include(GNUInstallDirs)
set(GEMMTUNE_DEPS_DIR ${CMAKE_BINARY_DIR}/deps)
set(GEMMTUNE_NVRTC_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/gemmtune/nvrtc)

# The installed NVRTC's folder relative to the installed program's and library's folders, so an
# installed tree can be moved (NvrtcLibrary.cpp).
set(GEMMTUNE_NVRTC_INSTALL_DEFINITIONS "")
if(NOT IS_ABSOLUTE "${CMAKE_INSTALL_BINDIR}" AND NOT IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  file(RELATIVE_PATH from_bindir /prefix/${CMAKE_INSTALL_BINDIR} /prefix/${GEMMTUNE_NVRTC_INSTALL_DIR})
  set(GEMMTUNE_NVRTC_INSTALL_DEFINITIONS GEMMTUNE_NVRTC_FROM_BINDIR="${from_bindir}"
      GEMMTUNE_NVRTC_FROM_LIBDIR="gemmtune/nvrtc")
endif()

install(DIRECTORY ${GEMMTUNE_DEPS_DIR}/nvrtc/lib/ DESTINATION ${GEMMTUNE_NVRTC_INSTALL_DIR} OPTIONAL)
install(FILES ${GEMMTUNE_DEPS_DIR}/nvrtc/License.txt DESTINATION ${GEMMTUNE_NVRTC_INSTALL_DIR} OPTIONAL)
install(DIRECTORY ${GEMMTUNE_DEPS_DIR}/cutlass/include DESTINATION ${CMAKE_INSTALL_DATADIR}/gemmtune/cutlass OPTIONAL)
install(FILES ${GEMMTUNE_DEPS_DIR}/cutlass/LICENSE.txt DESTINATION ${CMAKE_INSTALL_DATADIR}/gemmtune/cutlass OPTIONAL)
