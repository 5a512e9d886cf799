// Latency: the host-side costs an application pays around the GEMM itself — sgemm()'s dispatch
// over a raw cuLaunchKernel of the very kernel it picks (small size, many launches), and how long
// the results database takes to answer best() (memoised, and after a cold open).
#pragma once

#include <cuda.h>

#include <filesystem>
#include <optional>
#include <string>

#include "Compiler.hpp"
#include "SizeSpec.hpp"
#include "gemmtune/GpuSpec.hpp"

namespace gemmtune {
class HelperKernels;
}

namespace gemmtune::bench {

class LibraryColumn;

struct DispatchFigures {
  GemmShape shape;
  std::string instance;   // the kernel sgemm() runs, launched raw for comparison
  double firstCallMs = 0; // the first sgemm() at this shape: choose, load (compile if needed), launch
  double rawUs = 0;       // median host time per cuLaunchKernel
  double sgemmUs = 0;     // median host time per sgemm()
};

// Throws std::runtime_error when the kernel cannot be compiled or a launch fails.
DispatchFigures measureDispatch(LibraryColumn& library, int device, CUstream stream, const HelperKernels& helpers,
                                Compiler& compiler, const std::string& arch, const GemmShape& shape);

struct QueryFigures {
  double warmP50Us = 0, warmP99Us = 0;  // serving::Lookup::best, memoised
  double coldOpenP50Us = 0;             // open read-only + header check + first best()
  std::optional<double> libraryWarmP50Us;  // gemmtune::Library::best, when built
};

QueryFigures measureQueries(const std::filesystem::path& dbPath, const GpuSpec& gpu, const GemmShape& shape,
                            LibraryColumn* library, int device);

std::string formatLatency(const std::optional<DispatchFigures>& dispatch, const std::optional<QueryFigures>& query);

}  // namespace gemmtune::bench
