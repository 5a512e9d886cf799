// The library calls both halves of the module make: the Python functions (Module.cpp) and JAX's
// FFI handler (JaxFfi.cpp). One Library per precision class for the whole process.
#pragma once

#include <cuda.h>

#include "ViewPlan.hpp"
#include "gemmtune/Library.hpp"
#include "gemmtune/Precision.hpp"

namespace gemmtune::python {

// The library of one precision class, opened on first use (opening reads the results store, and
// most programs use one class) and kept for the process: never destroyed, because at exit the CUDA
// contexts it holds kernels in may already be gone. After the first call, a lookup is one atomic load.
Library& libraryFor(PrecisionClass precision);

// PrecisionClass by name, or std::invalid_argument that says which names there are.
PrecisionClass precisionFrom(const std::string& name);

// Enqueues the planned product (plan.launch must be true) on `stream` of the current context.
Status launchPlanned(Library& library, CUstream stream, const GemmPlan& plan, float alpha, float beta);

// Makes `device`'s primary context (the one PyTorch, CuPy and JAX run in) current on this thread. A
// thread that has not called the CUDA runtime yet has none: PyTorch's autograd worker thread, a
// new Python thread. The reference taken is never released; the context lives as long as the
// process, as it does for the frameworks.
bool makePrimaryContextCurrent(int device);

}  // namespace gemmtune::python
