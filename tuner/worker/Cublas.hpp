// Cublas: the worker's cuBLAS handle on its stream (device/CublasLibrary loads cuBLAS and maps
// row-major problems onto it): the verification reference (pedantic FP32) and the baseline and
// candidate (default math: plain FP32, no TF32; verified like any candidate).
#pragma once

#include <cuda.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "CublasLibrary.hpp"
#include "CublasLtLibrary.hpp"
#include "DeviceBuffer.hpp"
#include "LaunchArgs.hpp"

namespace gemmtune {

// A cuBLAS call failed; `status` is the cublasStatus_t value.
struct CublasError : std::runtime_error {
  CublasError(int s, const std::string& m) : std::runtime_error(m), status(s) {}
  int status;
};

class Cublas {
 public:
  enum class Math { Pedantic, Default };

  // Needs the worker's context current. Throws UnavailableError when no cuBLAS library loads.
  explicit Cublas(CUstream stream);
  ~Cublas();
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;

  int version() const { return version_; }
  const std::string& library() const { return library_; }

  // Row-major C = alpha * A * B + beta * C with lda = K, ldb = N, ldc = N, enqueued on the stream;
  // `batch` such products of packed matrices, one after the other.
  void sgemm(Math math, long long M, long long N, long long K, float alpha, CUdeviceptr A, CUdeviceptr B,
             float beta, CUdeviceptr C, long long batch = 1) const;
  // The SGEMM `args` describe: its layout, leading dimensions, strided batches or pointer arrays
  // (cublasSgemmBatched), enqueued on the stream.
  void gemm(Math math, const SgemmArgs& args) const;

  // cuBLASLt's configurations for the problem `args` poses (CublasLtLibrary::algorithms, within
  // its kWorkspaceBytes); empty with `why` set where cuBLASLt cannot be loaded or lists none.
  std::vector<CublasLtAlgo> ltAlgorithms(const SgemmArgs& args, std::size_t limit, std::string& why);
  // `args` through cuBLASLt with `algo` on the stream. Throws CublasError where cuBLASLt refuses
  // it (a status: nothing was enqueued), UnavailableError where cuBLASLt cannot be loaded.
  void gemmLt(const CublasLtAlgo& algo, const SgemmArgs& args);

 private:
  void setMath(Math math) const;
  // cuBLASLt's handle and workspace, made on first use; false with `why` set where it cannot be loaded.
  bool openLt(std::string& why);

  const CublasLibrary* lib_ = nullptr;
  CUstream stream_ = nullptr;
  const CublasLtLibrary* lt_ = nullptr;
  void* ltHandle_ = nullptr;
  DeviceBuffer ltWorkspace_;
  std::string ltFailure_;  // why cuBLASLt could not be opened, once it could not
  void* handle_ = nullptr;
  int version_ = 0;
  std::string library_;
};

}  // namespace gemmtune
