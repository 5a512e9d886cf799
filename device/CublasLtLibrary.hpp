// CublasLtLibrary: cuBLASLt's FP32 matmul, loaded at run time (dlopen libcublasLt.so.13, then
// .so.12) as CublasLibrary loads cuBLAS: nothing links it, and a machine without it loses only
// these candidates. It lists the algorithm configurations cuBLASLt accepts for a problem and runs
// one of them, with the row-major mapping CublasLibrary uses (C = op(A)·op(B) row-major is
// Cᵀ = op(B)ᵀ·op(A)ᵀ column-major). FP32 compute throughout (CUBLAS_COMPUTE_32F: no TF32).
#pragma once

#include <cuda.h>

#include <cstddef>
#include <string>
#include <vector>

#include "CublasLtAlgo.hpp"
#include "LaunchArgs.hpp"

namespace gemmtune {

class CublasLtLibrary {
 public:
  // The process's cuBLASLt, loaded on the first call and never unloaded; null when it cannot be
  // (`why` then says why and what to do).
  static const CublasLtLibrary* get(std::string& why);

  const std::string& name() const { return name_; }  // "libcublasLt.so.13"

  // The workspace the tuner lists configurations within and the library runs them with: every
  // configuration a row names fits it (cuBLAS's own default on Hopper is 32 MiB too).
  static constexpr std::size_t kWorkspaceBytes = 32u << 20;

  // 0 (CUBLAS_STATUS_SUCCESS) or a cublasStatus_t, with `error` set.
  int create(void*& handle, std::string& error) const;
  void destroy(void* handle) const;

  // The configurations cuBLASLt runs `args`'s problem with in at most `workspaceBytes`: the
  // heuristic's list first (its first is the one cublasSgemm ran, measured on an H100), then
  // every other configuration of every FP32 algorithm that cublasLtMatmulAlgoCheck accepts with
  // the algorithm's default kernel, then their variants (custom options), at most `limit` in all,
  // none twice.
  // Pointer-array batches are refused (CUBLAS_STATUS_NOT_SUPPORTED, with `error` saying so).
  int algorithms(void* handle, const SgemmArgs& args, std::size_t workspaceBytes, std::size_t limit,
                 std::vector<CublasLtAlgo>& out, std::string& error) const;

  // The row-major SGEMM `args` describe (layout, leading dimensions, one product or strided
  // batches), as one cublasLtMatmul with `algo`, enqueued on `stream`.
  int rowMajorMatmul(void* handle, const SgemmArgs& args, const CublasLtAlgo& algo, CUdeviceptr workspace,
                     std::size_t workspaceBytes, CUstream stream, std::string& error) const;

  struct Api;  // the resolved entry points (CublasLtLibrary.cpp)

 private:
  CublasLtLibrary(std::string name, const Api* api) : name_(std::move(name)), api_(api) {}
  std::string statusText(int status) const;

  std::string name_;
  const Api* api_;
};

}  // namespace gemmtune
