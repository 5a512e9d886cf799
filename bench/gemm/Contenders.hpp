// Contenders: what gemm_bench times at one size, each a column of the table — cuBLAS (default
// math, no TF32), the classic fixed configuration of every family (guarded where the size needs
// it), the tuned best of every family from the results database, gemmtune::Library::sgemm(), and
// sgemm() with cuBLAS excluded as a candidate (gemmtune's kernels only).
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
#include "gemmtune/Precision.hpp"

namespace gemmtune {
class Cublas;
}

namespace gemmtune::bench {

class LibraryColumn;

enum class Kind { cublas, fixed, tuned, library, library_ours };

// Which columns a run times (`gemm_bench --columns`); cuBLAS always, as every ratio's reference.
struct ColumnSet {
  bool fixed = true, tuned = true, library = true, ours = false;
  // `--precision`: families of a higher class get no fixed or tuned column, and the tuned lookup
  // and sgemm() never serve one, so a strict run shows only what a strict caller could be given.
  PrecisionClass precision = PrecisionClass::strict;
};
// "fixed,tuned,library,ours" (cublas accepted and implied); throws std::invalid_argument naming a bad item.
ColumnSet parseColumns(const std::string& list);

struct Contender {
  Kind kind;
  std::string column;    // "cuBLAS", "smem fixed", "blocktile1d tuned", "sgemm()"
  std::string family;    // fixed and tuned columns
  std::string instance;  // what runs
  std::string match;     // tuned and sgemm(): how the configuration was found
  std::function<void(const SgemmArgs&)> launch;  // enqueues one SGEMM on the bench stream
  PrecisionClass precision = PrecisionClass::strict;  // of what runs: the family's (cuBLAS: strict)
};

class ContenderFactory {
 public:
  // `lookup` and `library` may be null (no database, library not built); both are built for
  // `columns.precision` (LookupPolicy::precision, Library::Options::precision).
  // `ours`: the library with cuBLAS excluded (may be null too).
  ContenderFactory(CUstream stream, int device, const GpuSpec& gpu, const Cublas& blas, Compiler& compiler,
                   serving::Lookup* lookup, LibraryColumn* library, LibraryColumn* ours, ColumnSet columns);

  // Columns that cannot run at `s` (nothing tuned, a kernel that does not load) are left out
  // with a line on stderr.
  std::vector<Contender> forSize(const GemmShape& s);

 private:
  void addLibrary(std::vector<Contender>& out, Kind kind, LibraryColumn* library, const GemmShape& s);
  Contender kernel(Kind kind, const std::string& column, const Config& config, std::string cubin,
                   std::vector<std::string> loweredNames, std::string match, const GemmShape& shape);

  CUstream stream_;
  int device_;
  GpuSpec gpu_;
  const Cublas& blas_;
  Compiler& compiler_;
  serving::Lookup* lookup_;
  LibraryColumn* library_;
  LibraryColumn* ours_;
  ColumnSet columns_;
};

}  // namespace gemmtune::bench
