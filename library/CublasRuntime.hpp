// CublasRuntime: the library's cuBLAS handles (device/CublasLibrary loads cuBLAS at run time and
// maps row-major problems onto it). A plan answered by a cuBLAS row (the tuner measured cuBLAS
// fastest there, or the model predicts it) runs through it; where cuBLAS cannot be loaded the
// library runs gemmtune's best kernel instead.
//
// Handles: one per (CUDA context, stream), created lazily in that context and kept for the
// process's life. A handle's default workspace serves the launches of one stream in order; handles
// of different streams keep launches that may overlap off each other's workspace. Calls take a
// mutex: a cuBLAS handle is not to be used from two threads at once. The math mode stays cuBLAS's
// default (plain FP32, never TF32), the mode the tuner measured.
#pragma once

#include <cuda.h>

#include <map>
#include <optional>
#include <string_view>
#include <mutex>
#include <string>
#include <utility>

#include "CublasLibrary.hpp"
#include "CublasLtLibrary.hpp"
#include "DeviceBuffer.hpp"

namespace gemmtune::library {

class CublasRuntime {
 public:
  // The process's runtime, on the first call; null when cuBLAS cannot be loaded (`why` then says
  // why, the same text every time).
  static CublasRuntime* get(std::string& why);

  // Enqueues the row-major SGEMM `args` describe (every batch of a call: strided or pointer
  // arrays) as one cuBLAS call on `stream` of the current context, whose cuCtxGetId is `context`.
  // Returns false with `error` set when cuBLAS refuses it.
  // `instance` is the row's: "cublas_<layout>" runs cuBLAS's own call; "cublas_<layout>_<algo>"
  // runs that cuBLASLt configuration (its handle and a workspace of CublasLtLibrary::kWorkspaceBytes made
  // on first use), or cuBLAS's own call where cuBLASLt cannot be loaded, refuses the configuration
  // for these operands, or `capturing` (a graph would keep the stream's workspace).
  bool sgemm(unsigned long long context, CUstream stream, const SgemmArgs& args, std::string_view instance,
             bool capturing, std::string& error);
  // Whether (context, stream) has its handle already (a first call makes one, which allocates),
  // and, with `lt`, cuBLASLt's handle and workspace (or knows cuBLASLt cannot be loaded).
  bool hasHandle(unsigned long long context, CUstream stream, bool lt = false);
  // The cuBLASLt configuration `instance` names for `layout` ("cublas_<layout>_<algo>"), or none.
  static std::optional<CublasLtAlgo> ltAlgoOf(std::string_view instance, const Layout& layout);

 private:
  explicit CublasRuntime(const CublasLibrary& lib) : lib_(lib) {}
  // The handle of (context, stream), made on first use; null with `error` set when cuBLAS cannot make one.
  void* handleFor(unsigned long long context, CUstream stream, std::string& error);
  // cuBLASLt's handle and workspace of (context, stream), made on first use; null where cuBLASLt
  // cannot be loaded or the workspace cannot be allocated.
  struct LtHandle {
    void* handle = nullptr;
    DeviceBuffer workspace;
  };
  LtHandle* ltHandleFor(unsigned long long context, CUstream stream);


  const CublasLibrary& lib_;
  std::mutex mutex_;
  std::map<std::pair<unsigned long long, CUstream>, void*> handles_;
  std::map<std::pair<unsigned long long, CUstream>, LtHandle> ltHandles_;
};

}  // namespace gemmtune::library
