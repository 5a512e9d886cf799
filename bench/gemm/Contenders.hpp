// Contenders: what gemm_bench times at one size, each a column of the table — cuBLAS (default
// math, no TF32), the classic fixed configuration of every family (guarded where the size needs
// it), the tuned best of every family from the results database, and gemmtune::Library::sgemm().
#pragma once

#include <cuda.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "Compiler.hpp"
#include "LoadedKernel.hpp"
#include "Lookup.hpp"
#include "SizeSpec.hpp"
#include "gemmtune/GpuSpec.hpp"

namespace gemmtune {
class Cublas;
}

namespace gemmtune::bench {

class LibraryColumn;

enum class Kind { cublas, fixed, tuned, library };

struct Contender {
  Kind kind;
  std::string column;    // "cuBLAS", "smem fixed", "blocktile1d tuned", "sgemm()"
  std::string family;    // fixed and tuned columns
  std::string instance;  // what runs
  std::string match;     // tuned and sgemm(): how the configuration was found
  std::function<void(const SgemmArgs&)> launch;  // enqueues one SGEMM on the bench stream
};

class ContenderFactory {
 public:
  // `lookup` and `library` may be null (no database, library not built).
  ContenderFactory(CUstream stream, int device, const GpuSpec& gpu, const Cublas& blas, Compiler& compiler,
                   serving::Lookup* lookup, LibraryColumn* library);

  // Columns that cannot run at `s` (nothing tuned, a kernel that does not load) are left out
  // with a line on stderr.
  std::vector<Contender> forSize(const GemmShape& s);

 private:
  Contender kernel(Kind kind, const std::string& column, const Config& config, std::string cubin,
                   std::vector<std::string> loweredNames, std::string match, const GemmShape& shape);

  CUstream stream_;
  int device_;
  GpuSpec gpu_;
  const Cublas& blas_;
  Compiler& compiler_;
  serving::Lookup* lookup_;
  LibraryColumn* library_;
};

}  // namespace gemmtune::bench
