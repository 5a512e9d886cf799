// NvrtcLibrary: NVRTC loaded at run time with dlopen, so gemmtune can prefer the pinned NVRTC 13.5
// (scripts/fetch-deps.sh) over the CUDA toolkit's. NVRTC 13.0 addresses shared memory with 64-bit
// arithmetic; measured on an H100, a CUTLASS SIMT kernel ran at 0.86x cuBLAS through it and
// 1.00-1.06x through 13.5. Only <nvrtc.h> is used at build time, for the function types.
//
// Search order (the first that loads wins):
//   1. $GEMMTUNE_NVRTC, a path to libnvrtc.so.* (when set it must load: no fallback)
//   2. the pinned copy installed with gemmtune: <libdir>/gemmtune/nvrtc/libnvrtc.so.13, found
//      from the running program (<prefix>/bin) and from the library holding this code
//   3. the pinned copy in the build tree: GEMMTUNE_BUILD_DEPS_DIR/nvrtc/lib/libnvrtc.so.13
//      (2 and 3 are passed over when the CUDA driver is older than 13.0: it cannot load their cubins)
//   4. the toolkit's: libnvrtc.so.13, libnvrtc.so.12 by soname, then under $CUDA_HOME,
//      $CUDA_PATH and /usr/local/cuda (lib64/)
#pragma once

#include <nvrtc.h>

#include <optional>
#include <string>
#include <vector>

namespace gemmtune {

// X-macro of every NVRTC entry point gemmtune uses.
#define GEMMTUNE_NVRTC_FUNCTIONS(X)                                                               \
  X(nvrtcGetErrorString) X(nvrtcVersion) X(nvrtcGetNumSupportedArchs) X(nvrtcGetSupportedArchs) \
  X(nvrtcCreateProgram) X(nvrtcDestroyProgram) X(nvrtcAddNameExpression) X(nvrtcCompileProgram) \
  X(nvrtcGetProgramLogSize) X(nvrtcGetProgramLog) X(nvrtcGetLoweredName) X(nvrtcGetPTXSize)     \
  X(nvrtcGetPTX) X(nvrtcGetCUBINSize) X(nvrtcGetCUBIN)

// One place to look for NVRTC. `required`: failing to load it is an error, not a reason to go on.
struct NvrtcCandidate {
  std::string path;    // absolute, or a soname for the dynamic linker to find
  std::string origin;  // "GEMMTUNE_NVRTC", "installed", "build tree", "toolkit"
  bool required = false;
};

class NvrtcLibrary {
 public:
  static constexpr int kPinnedMajor = 13, kPinnedMinor = 5;

  // The process-wide NVRTC, loaded on first use (thread-safe). Throws UnavailableError naming
  // what was tried and what to do when none loads, or when $GEMMTUNE_NVRTC does not.
  static const NvrtcLibrary& get();
  // A fresh load from `candidates`, in order (tests; get() uses searchOrder()). The library stays
  // loaded for the life of the process.
  static NvrtcLibrary load(const std::vector<NvrtcCandidate>& candidates);
  // Where this process looks, in order. `env` is $GEMMTUNE_NVRTC (null: unset). `driverVersion`
  // is the CUDA driver's (cuDriverGetVersion: 12080 for 12.8), none without a driver: a driver
  // older than the pinned NVRTC's major version cannot load the cubins it makes, so the pinned
  // copies are passed over there (the toolkit's NVRTC matches the driver it was installed with).
  static std::vector<NvrtcCandidate> searchOrder(const char* env, std::optional<int> driverVersion);
  static std::vector<NvrtcCandidate> searchOrder(const char* env) { return searchOrder(env, installedDriverVersion()); }
  // The installed CUDA driver's version, read without initialising it; none when libcuda is absent.
  static std::optional<int> installedDriverVersion();

#define GEMMTUNE_DECLARE(name) decltype(&::name) name = nullptr;
  GEMMTUNE_NVRTC_FUNCTIONS(GEMMTUNE_DECLARE)
#undef GEMMTUNE_DECLARE

  const std::string& path() const { return path_; }      // the file loaded, e.g. /usr/local/cuda/lib64/libnvrtc.so.13
  const std::string& origin() const { return origin_; }  // NvrtcCandidate::origin
  int major() const { return major_; }
  int minor() const { return minor_; }
  std::string version() const;  // "13.5"
  // The pinned version (13.5) or newer: kernels as fast as measured.
  bool pinned() const;
  // "NVRTC 13.5 from PATH (ORIGIN)" plus, when older than the pinned one, why that matters and
  // what to do.
  std::string describe() const;
  // get().describe(), or "NVRTC: none (why)" when none loads. Never throws (--version, `gpus`).
  static std::string describeInUse();
  // Logs describe() once per process when this NVRTC is older than the pinned one; no-op otherwise.
  void warnIfOlderThanPinned() const;

 private:
  NvrtcLibrary() = default;
  std::string path_, origin_;
  int major_ = 0, minor_ = 0;
};

}  // namespace gemmtune
