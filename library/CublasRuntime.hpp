// CublasRuntime: cuBLAS's SGEMM for the library, loaded at run time (dlopen libcublas.so.13, then
// .so.12) so that neither the library nor its users link cuBLAS. A plan answered by a cuBLAS row
// (the tuner measured cuBLAS fastest there) runs through it; where it cannot be loaded the library
// runs gemmtune's best kernel instead.
//
// Handles: one per (CUDA context, stream), created lazily in that context and kept for the
// process's life. A handle's default workspace serves the launches of one stream in order; handles
// of different streams keep launches that may overlap off each other's workspace. Calls take a
// mutex: a cuBLAS handle is not to be used from two threads at once. The math mode stays cuBLAS's
// default (plain FP32, never TF32), the mode the tuner measured.
#pragma once

#include <cuda.h>

#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "GemmCall.hpp"

namespace gemmtune::library {

class CublasRuntime {
 public:
  // The process's cuBLAS, loaded on the first call; null when it cannot be (`why` then says why,
  // the same text every time). Never unloaded: cuBLAS keeps process-wide state.
  static CublasRuntime* get(std::string& why);

  // Enqueues the row-major `call` (asRowMajor; valid) on `stream` of the current context, whose
  // cuCtxGetId is `context`: one cuBLAS call for every batch (strided or pointer arrays). Returns
  // false with `error` set when cuBLAS refuses it.
  bool sgemm(unsigned long long context, CUstream stream, const GemmCall& call, std::string& error);

  struct Api;  // the resolved entry points (CublasRuntime.cpp)

 private:
  CublasRuntime(void* lib, std::string name, Api* api) : lib_(lib), name_(std::move(name)), api_(api) {}
  // The handle of (context, stream), made on first use; null with `error` set when cuBLAS cannot make one.
  void* handleFor(unsigned long long context, CUstream stream, std::string& error);

  void* lib_;
  std::string name_;  // "libcublas.so.13"
  Api* api_;
  std::mutex mutex_;
  std::map<std::pair<unsigned long long, CUstream>, void*> handles_;
};

}  // namespace gemmtune::library
