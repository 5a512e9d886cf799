// gemmtune::Library: run the fastest tuned SGEMM for this GPU and problem from your own code.
//
//   gemmtune::Library lib;                      // default results DB ($GEMMTUNE_DB or XDG path),
//                                               // then $GEMMTUNE_SYSTEM_DB, else
//                                               // <prefix>/share/gemmtune/system.db (read-only snapshots)
//   auto choice = lib.best(0, 4096, 4096, 4096); // what would run, and how good the match is
//   lib.sgemm(stream, M, N, K, 1.0f, A, K, B, N, 0.0f, C, N);   // device pointers, row-major
//
// Error policy: the constructor and best() never throw for a missing, damaged or tampered
// database — they fall back (nearest measured size, then a built-in default kernel) and log one
// warning per cause on the spdlog logger named "gemmtune". best() throws only for a caller's
// mistake (M, N or K < 1) or an absent GPU. sgemm() never throws at all: it returns a Status,
// with lastError() for details.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "gemmtune/GpuSpec.hpp"

struct CUstream_st;  // cudaStream_t and CUstream are both CUstream_st*

namespace gemmtune {

enum class Match {
  exact,           // measured at this M, N, K on this GPU
  nearest_size,    // measured at one of the nearest sizes, predicted fastest here (guarded form when the tiles do not divide)
  default_config,  // nothing usable measured: the built-in default configuration
};

struct Choice {
  std::string instance;      // canonical name of the configuration sgemm() runs
  Match match = Match::default_config;
  std::string measuredSize;  // "4096" or "4096x1024x512"; empty for default_config
  double measuredGflops = 0; // at measuredSize; 0 for default_config
  std::string note;          // why the match is not exact, when it is not (for nearest_size: why this row)
};

enum class Status {
  ok,
  invalid_argument,  // a dimension < 1, a leading dimension too small, a null pointer
  no_gpu,            // no CUDA driver, or no current context on this thread
  launch_failed,     // the driver refused the launch (the message says why)
};

const char* toString(Match match);
const char* toString(Status status);

class Library {
 public:
  // An empty path means $GEMMTUNE_DB, else $XDG_DATA_HOME/gemmtune/tune.db. After it the library
  // consults a read-only system snapshot (a file from `gemmtune db snapshot`): the store
  // $GEMMTUNE_SYSTEM_DB names (set but empty: none), else <prefix>/share/gemmtune/system.db
  // beside the installed library, when that file exists.
  explicit Library(std::filesystem::path dbPath = {});

  struct Options {
    // Store locations (a path, sqlite:PATH or postgresql://...), highest precedence first: e.g.
    // {user database, system snapshot}. An exact answer from the first store that has one wins,
    // else a nearest-size answer from the first store that has one. Stores are only read. Empty:
    // as Library() above.
    std::vector<std::string> stores;
  };
  explicit Library(const Options& options);
  ~Library();
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  // The configuration sgemm() would run for device `device` (a CUDA ordinal) and M x N x K.
  // Throws only for M, N or K < 1 (std::invalid_argument) and when there is no GPU `device`
  // (gemmtune::NoGpuError without a driver or GPU, gemmtune::UsageError for an ordinal out of range).
  Choice best(int device, long long M, long long N, long long K);
  // The same for a GPU described rather than present (the fields `gemmtune gpus --json` prints),
  // so a choice can be planned on a machine without that GPU. Throws only for M, N or K < 1.
  Choice best(const GpuSpec& gpu, long long M, long long N, long long K);

  // C = alpha * A * B + beta * C on `stream` (nullptr: the default stream) in the calling
  // thread's current CUDA context. Row-major: A is M x K (lda >= K), B is K x N (ldb >= N), C is
  // M x N (ldc >= N); pointers 4-byte aligned. beta == 0 never reads C. Thread-safe; never throws.
  // The first call per context and shape chooses and loads the kernel (NVRTC only when the
  // database holds no usable binary); later calls cost a hash lookup plus the launch. Launches
  // are asynchronous: a fault inside the kernel surfaces at the next synchronisation. Kernels
  // that split K (serial split-K) use a small workspace the library allocates once per context
  // and stream and keeps until it is destroyed; calls on one stream share it in stream order.
  Status sgemm(CUstream_st* stream, int M, int N, int K, float alpha, const float* A, int lda, const float* B,
               int ldb, float beta, float* C, int ldc) noexcept;

  // The message for this thread's last non-ok Status.
  static std::string lastError();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gemmtune
