// HelperKernels: the worker's own small kernels — input generation, |x| copies, the result
// checker and the canary SGEMM — compiled with NVRTC for the worker's GPU when it starts, so
// verifying even 8192^3 takes milliseconds on the GPU instead of seconds on the host.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string>

#include "DeviceBuffer.hpp"

namespace gemmtune {

// What the checker found in one output C against its reference.
struct CompareStats {
  std::uint64_t bad = 0;        // elements outside the check's criterion
  std::uint64_t nonFinite = 0;  // NaN or Inf elements
  double maxRatio = 0;          // max |C - ref| / tolerance (+inf for non-finite)
  std::uint64_t firstBad = 0;   // linear index of the first bad element (valid when bad > 0)
};

class HelperKernels {
 public:
  // The CUDA source (self-contained, extern "C" kernels) and one of its entry points, for NVRTC.
  static const char* source();
  static const char* anchorKernel();

  // Compiles for `arch` ("sm_90") and loads the module into the current context.
  HelperKernels(const std::string& arch, CUstream stream, int smCount);
  ~HelperKernels();
  HelperKernels(const HelperKernels&) = delete;
  HelperKernels& operator=(const HelperKernels&) = delete;

  // Integers uniform in [-range, range] (as floats), from a counter-based hash of (seed, index).
  void fillInt(CUdeviceptr p, long long n, std::uint32_t seed, int range) const;
  // Standard normal values (Box-Muller over the same hash).
  void fillNormal(CUdeviceptr p, long long n, std::uint32_t seed) const;
  void fillConstant(CUdeviceptr p, long long n, float value) const;
  void absCopy(CUdeviceptr src, CUdeviceptr dst, long long n) const;
  // exact: bad = (C != ref), NaN included. Otherwise bad = non-finite or |C - ref| > tolScale·absAB.
  // maxRatio is measured against tolScale·absAB in both modes. Synchronizes the stream.
  CompareStats compare(CUdeviceptr C, CUdeviceptr ref, CUdeviceptr absAB, long long n, float tolScale,
                       bool exact) const;
  // A plain, obviously correct SGEMM with the template contract, for the canary.
  void canarySgemm(int M, int N, int K, float alpha, CUdeviceptr A, CUdeviceptr B, float beta, CUdeviceptr C) const;

 private:
  void launch(CUfunction f, long long n, void** args) const;
  CUstream stream_;
  int smCount_;
  CUmodule module_ = nullptr;
  CUfunction fillInt_ = nullptr, fillNormal_ = nullptr, fillConstant_ = nullptr, absCopy_ = nullptr,
             compare_ = nullptr, canary_ = nullptr;
  DeviceBuffer stats_;
};

}  // namespace gemmtune
