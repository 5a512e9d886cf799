// LibraryColumn: gemmtune::Library as an application uses it — its choice per size, sgemm() on
// the bench's buffers, best() latency. Compiled against the library only when the build has it
// (GEMMTUNE_BENCH_HAS_LIBRARY); otherwise built() is false and the bench leaves the column out.
#pragma once

#include <cuda.h>

#include <filesystem>
#include <memory>
#include <string>

#include "LoadedKernel.hpp"
#include "SizeSpec.hpp"
#include "gemmtune/Precision.hpp"

namespace gemmtune::bench {

class LibraryColumn {
 public:
  static bool built();

  // Throws std::runtime_error when the library is not built in. `cublas` false: the library with
  // cuBLAS excluded as a candidate (Library::Options::cublas), gemmtune's kernels only.
  // `precision`: the most sgemm() may run (Library::Options::precision), the run's --precision.
  LibraryColumn(const std::filesystem::path& dbPath, bool cublas, PrecisionClass precision);
  ~LibraryColumn();
  LibraryColumn(const LibraryColumn&) = delete;
  LibraryColumn& operator=(const LibraryColumn&) = delete;

  struct Pick {
    std::string instance;  // what sgemm() runs at this size
    std::string match;     // exact, nearest_size, default_config
    PrecisionClass precision = PrecisionClass::strict;  // the class of the kernel's family (cuBLAS: strict)
  };
  Pick best(int device, const GemmShape& s);
  // One sgemm() on `stream`; throws std::runtime_error with lastError() unless it returns ok.
  void sgemm(CUstream stream, const SgemmArgs& a);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gemmtune::bench
