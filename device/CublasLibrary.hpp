// CublasLibrary: cuBLAS's SGEMM entry points, loaded at run time (dlopen libcublas.so.13, then
// .so.12) so that nothing links cuBLAS. Loaded once per process and never unloaded (cuBLAS keeps
// process-wide state). The worker uses it as the verification reference and the baseline; the
// library runs cuBLAS rows through it. Both call it with a row-major problem (`SgemmArgs`): the
// one place that maps row-major onto cuBLAS's column-major.
#pragma once

#include <cuda.h>

#include <string>

#include "LaunchArgs.hpp"

namespace gemmtune {

class CublasLibrary {
 public:
  // The process's cuBLAS, loaded on the first call; null when it cannot be (`why` then says why
  // and what to do, the same text every time).
  static const CublasLibrary* get(std::string& why);

  const std::string& name() const { return name_; }  // "libcublas.so.13"

  // Handles: 0 (CUBLAS_STATUS_SUCCESS) or a cublasStatus_t, with `error` set. A handle is for one
  // thread at a time and enqueues on the stream it was last given.
  int create(void*& handle, std::string& error) const;
  void destroy(void* handle) const;
  int setStream(void* handle, CUstream stream, std::string& error) const;
  // Pedantic: no reduced-precision internal paths (a reference); else CUBLAS_DEFAULT_MATH (plain
  // FP32, never TF32 for SGEMM: what the tuner measures and the library runs).
  int setMathMode(void* handle, bool pedantic, std::string& error) const;
  int version(void* handle) const;

  // The row-major SGEMM `args` describe (layout, leading dimensions, one product, strided batches
  // or device pointer arrays) as one cuBLAS call on the handle's stream.
  int rowMajorSgemm(void* handle, const SgemmArgs& args, std::string& error) const;

  struct Api;  // the resolved entry points (CublasLibrary.cpp)

 private:
  CublasLibrary(std::string name, const Api* api) : name_(std::move(name)), api_(api) {}
  std::string statusText(int status) const;

  std::string name_;
  const Api* api_;
};

}  // namespace gemmtune
