// HelperKernels: the worker's own small kernels — input generation, |x| copies, strided fills and
// copies, the result checker, the guard scan and the canary SGEMM — compiled with NVRTC for the
// worker's GPU when it starts, so verifying even 8192^3 takes milliseconds on the GPU instead of
// seconds on the host.
#pragma once

#include <cuda.h>

#include <array>
#include <cstdint>
#include <string>

#include "DeviceBuffer.hpp"

namespace gemmtune {

// A rows × cols row-major matrix of floats, `ld` floats apart, as the helpers address one.
struct DeviceMatrix {
  CUdeviceptr ptr = 0;
  long long rows = 0, cols = 0, ld = 0;
  long long elems() const { return rows * cols; }
  static DeviceMatrix packed(CUdeviceptr p, long long rows, long long cols) { return {p, rows, cols, cols}; }
  static DeviceMatrix vector(CUdeviceptr p, long long n) { return packed(p, 1, n); }
};

// What the checker found in one output C against its reference.
struct CompareStats {
  std::uint64_t bad = 0;        // elements outside the check's criterion
  std::uint64_t nonFinite = 0;  // NaN or Inf elements
  double maxRatio = 0;          // max |C - ref| / tolerance (+inf for non-finite)
  std::uint64_t firstBad = 0;   // row * cols + col of the first bad element (valid when bad > 0)
};

// What the guard scan found around one C.
struct GuardStats {
  std::uint64_t changed = 0;     // words outside C (guards, padding columns) that no longer hold the canary
  std::uint64_t firstChanged = 0;  // index in the allocation of the first (valid when changed > 0)
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
  // Every element of `m` set to the 32-bit pattern `bits` (NaN payloads survive: no arithmetic).
  void fillBits(const DeviceMatrix& m, std::uint32_t bits) const;
  // The packed rows × cols matrix at `src` into `dst` (which may have ld > cols).
  void copyInto(CUdeviceptr src, const DeviceMatrix& dst) const;
  void absCopy(CUdeviceptr src, CUdeviceptr dst, long long n) const;
  // C (strided) against the packed ref and absAB. exact: bad = (C != ref), NaN included.
  // Otherwise bad = non-finite or |C - ref| > tolScale·absAB. maxRatio is measured against
  // tolScale·absAB in both modes. Synchronizes the stream.
  CompareStats compare(const DeviceMatrix& C, CUdeviceptr ref, CUdeviceptr absAB, float tolScale, bool exact) const;
  // The words of the allocation at `alloc` (`allocElems` long) that lie outside C — before it,
  // after its last row, or in a row's padding columns — and differ from `canary`. C is `shape`,
  // starting `front` words into the allocation. Synchronizes the stream.
  GuardStats scanGuards(CUdeviceptr alloc, long long allocElems, long long front, const DeviceMatrix& shape,
                        std::uint32_t canary) const;
  // A plain, obviously correct SGEMM with the template contract, for the canary.
  void canarySgemm(int M, int N, int K, float alpha, CUdeviceptr A, CUdeviceptr B, float beta, CUdeviceptr C) const;

 private:
  void launch(CUfunction f, long long n, void** args) const;
  // Runs a kernel that accumulates into the 4-word stats buffer (zeros, first index ~0) and reads it back.
  std::array<std::uint64_t, 4> runStats(CUfunction f, long long n, void** args) const;
  CUstream stream_;
  int smCount_;
  CUmodule module_ = nullptr;
  CUfunction fillInt_ = nullptr, fillNormal_ = nullptr, fillBits_ = nullptr, copyRows_ = nullptr, absCopy_ = nullptr,
             compare_ = nullptr, scanGuards_ = nullptr, canary_ = nullptr;
  DeviceBuffer stats_;
};

}  // namespace gemmtune
