// HelperKernels: the worker's own small kernels — input generation, |x| copies, fills and copies
// of strided, batched and transposed matrices, the result checker, the canary scan and the
// canary SGEMM — compiled with NVRTC for the worker's GPU when it starts, so verifying even
// 8192^3 takes milliseconds on the GPU instead of seconds on the host.
#pragma once

#include <cuda.h>

#include <array>
#include <cstdint>
#include <string>

#include "DeviceBuffer.hpp"

namespace gemmtune {

// `count` rows × cols row-major matrices of floats (a batch), rows `ld` floats apart, as the
// helpers address them: matrix b at ptr + b·stride, or at array[b] when `array` (a device array
// of `count` pointers) is set. Element i of the whole is (b·rows + row)·cols + col. Passed to the
// helper kernels as it is (their `Matrix`).
struct DeviceMatrix {
  CUdeviceptr ptr = 0;
  long long rows = 0, cols = 0, ld = 0;
  long long count = 1, stride = 0;
  CUdeviceptr array = 0;
  long long elems() const { return count * rows * cols; }
  // Packed: rows of cols floats, matrix after matrix.
  static DeviceMatrix packed(CUdeviceptr p, long long rows, long long cols, long long count = 1) {
    return {p, rows, cols, cols, count, rows * cols, 0};
  }
  static DeviceMatrix vector(CUdeviceptr p, long long n) { return packed(p, 1, n); }
};
static_assert(sizeof(DeviceMatrix) == 56, "DeviceMatrix is passed by value as the helper kernels' Matrix");

// What the checker found in one output C (every batch) against its reference.
struct CompareStats {
  std::uint64_t bad = 0;        // elements outside the check's criterion
  std::uint64_t nonFinite = 0;  // NaN or Inf elements
  double maxRatio = 0;          // max |C - ref| / tolerance (+inf for non-finite)
  std::uint64_t firstBad = 0;   // (b·rows + row)·cols + col of the first bad element (valid when bad > 0)
};

// What the canary scan found in one allocation.
struct GuardStats {
  std::uint64_t changed = 0;       // words that no longer hold the canary
  std::uint64_t firstChanged = 0;  // index in the allocation of the first (valid when changed > 0)
};

class HelperKernels {
 public:
  // The CUDA source (self-contained, extern "C" kernels) and one of its entry points, for NVRTC.
  static const std::string& source();
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
  // The packed matrices at `src` (batch after batch) into `dst`, which may have ld > cols, gaps
  // or pointer arrays. transpose: `src` holds each matrix transposed (dst.cols rows of dst.rows),
  // so dst stores it as op T reads it.
  void copyInto(CUdeviceptr src, const DeviceMatrix& dst, bool transpose = false) const;
  void absCopy(CUdeviceptr src, CUdeviceptr dst, long long n) const;
  // C (every batch) against the packed ref and absAB. exact: bad = (C != ref), NaN included.
  // Otherwise bad = non-finite or |C - ref| > tolScale·absAB. maxRatio is measured against
  // tolScale·absAB in both modes. Synchronizes the stream.
  CompareStats compare(const DeviceMatrix& C, CUdeviceptr ref, CUdeviceptr absAB, float tolScale, bool exact) const;
  // Elements of two packed results (n floats each) whose class — finite, NaN, +Inf, -Inf — differs
  // (bad, firstBad). Synchronizes the stream.
  CompareStats classMismatch(CUdeviceptr C, CUdeviceptr want, long long n) const;
  // The words of the allocation at `alloc` (`allocElems` long) that differ from `canary`. The
  // verifier sets C's own words back to the canary first, so what it finds was written outside C.
  // Synchronizes the stream.
  GuardStats scanCanaries(CUdeviceptr alloc, long long allocElems, std::uint32_t canary) const;
  // Holds the stream until the host-mapped word at `word` reaches `ticket` (wrapping compare), or
  // until timeoutNs pass (LaunchGate).
  void hold(CUdeviceptr word, std::uint32_t ticket, std::uint64_t timeoutNs) const;
  // A plain, obviously correct packed nn SGEMM (one matrix, launched directly rather than through
  // a plan), for the health check.
  void canarySgemm(int M, int N, int K, float alpha, CUdeviceptr A, CUdeviceptr B, float beta, CUdeviceptr C) const;

 private:
  void launch(CUfunction f, long long n, void** args) const;
  // Runs a kernel that accumulates into the 4-word stats buffer (zeros, first index ~0) and reads it back.
  std::array<std::uint64_t, 4> runStats(CUfunction f, long long n, void** args) const;
  CUstream stream_;
  int smCount_;
  CUmodule module_ = nullptr;
  CUfunction fillInt_ = nullptr, fillNormal_ = nullptr, fillBits_ = nullptr, copyInto_ = nullptr, absCopy_ = nullptr,
             compare_ = nullptr, scanCanaries_ = nullptr, canary_ = nullptr, classMismatch_ = nullptr, hold_ = nullptr;
  DeviceBuffer stats_;
};

}  // namespace gemmtune
