// Module: one kernel binary loaded into the current CUDA context, unloaded with the driver copy it
// was loaded through. (The tuner's LoadedKernel reaches the process-wide driver in its destructor,
// which may already be gone when a static Library is destroyed at exit.)
#pragma once

#include <cuda.h>

#include <string>

#include "CudaDriver.hpp"

namespace gemmtune::library {

class Module {
 public:
  // Throws CudaError when the binary does not load or lacks `loweredName`, or when the driver
  // refuses `dynamicSmemBytes` of dynamic shared memory.
  Module(const CudaDriver& driver, const std::string& cubin, const std::string& loweredName, int dynamicSmemBytes);
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  CUfunction function() const { return function_; }
  int attribute(CUfunction_attribute which) const;  // throws CudaError

 private:
  const CudaDriver& driver_;
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
};

}  // namespace gemmtune::library
