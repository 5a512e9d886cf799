#include "HelperKernels.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "CudaDriver.hpp"
#include "WorkerModule.hpp"

namespace gemmtune {

namespace {


const char* const kBody = R"CUDA(
// gemmtune worker helper kernels: inputs, |x|, copies, checker, canary scan, canary SGEMM.
// Grid-stride loops throughout.

extern "C" __global__ void gt_fill_int(float* p, long long n, unsigned seed, int range) {
  for (long long i = firstIndex(); i < n; i += stride()) {
    u64 h = mix64(((u64)seed << 40) ^ (u64)i);
    p[i] = (float)((long long)(h % (u64)(2 * range + 1)) - range);
  }
}

extern "C" __global__ void gt_fill_normal(float* p, long long n, unsigned seed) {
  for (long long i = firstIndex(); i < n; i += stride()) {
    u64 h = mix64(((u64)seed << 40) ^ (u64)i);
    float u1 = ((float)(h >> 40) + 0.5f) * (1.0f / 16777216.0f);  // (0, 1): log stays finite
    float u2 = (float)((h >> 16) & 0xFFFFFFull) * (1.0f / 16777216.0f);
    p[i] = sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
  }
}

// Element i of a rows x cols matrix whose rows lie ld apart (i = row * cols + col).
__device__ __forceinline__ long long at(long long i, long long cols, long long ld) {
  return ld == cols ? i : i / cols * ld + i % cols;
}

// count matrices of rows x cols, rows ld apart: matrix b at ptr + b * stride, or array[b] when
// array is set. The host's DeviceMatrix, passed by value.
struct Matrix {
  float* ptr;
  long long rows, cols, ld, count, stride;
  float* const* array;
};

// Element i of all the matrices, batch after batch (i = (b * rows + row) * cols + col).
__device__ __forceinline__ float* element(const Matrix& m, long long i) {
  long long b = 0;
  if (m.count > 1) {
    b = i / (m.rows * m.cols);
    i -= b * m.rows * m.cols;
  }
  float* base = m.array ? m.array[b] : m.ptr + b * m.stride;
  return base + at(i, m.cols, m.ld);
}

extern "C" __global__ void gt_fill_bits(Matrix m, unsigned bits) {
  const long long n = m.count * m.rows * m.cols;
  for (long long i = firstIndex(); i < n; i += stride()) *reinterpret_cast<unsigned*>(element(m, i)) = bits;
}

// src holds the same matrices packed, batch after batch; transposed (dst.cols rows of dst.rows
// each) when transpose is set.
extern "C" __global__ void gt_copy_into(const float* src, Matrix dst, int transpose) {
  const long long per = dst.rows * dst.cols, n = dst.count * per;
  for (long long i = firstIndex(); i < n; i += stride()) {
    long long from = i;
    if (transpose) {
      const long long b = i / per, row = i % per / dst.cols, col = i % dst.cols;
      from = b * per + col * dst.rows + row;
    }
    *element(dst, i) = src[from];
  }
}

extern "C" __global__ void gt_abs_copy(const float* src, float* dst, long long n) {
  for (long long i = firstIndex(); i < n; i += stride()) dst[i] = fabsf(src[i]);
}

// stats: [0] bad count, [1] non-finite count, [2] max ratio (float bits; ratios are >= 0, so
// integer order is float order), [3] first bad index. Each warp adds its share once.
__device__ void publish(u64 bad, u64 nonFinite, unsigned maxBits, u64 first, u64* stats) {
  for (int off = 16; off > 0; off >>= 1) {
    bad += __shfl_down_sync(0xffffffffu, bad, off);
    nonFinite += __shfl_down_sync(0xffffffffu, nonFinite, off);
    first = min(first, (u64)__shfl_down_sync(0xffffffffu, first, off));
    maxBits = max(maxBits, __shfl_down_sync(0xffffffffu, maxBits, off));
  }
  if ((threadIdx.x & 31) == 0) {
    if (bad) atomicAdd(&stats[0], bad);
    if (nonFinite) atomicAdd(&stats[1], nonFinite);
    atomicMax(&stats[2], (u64)maxBits);
    if (first != ~0ull) atomicMin(&stats[3], first);
  }
}

// C: every batch; ref and absAB are packed, batch after batch.
extern "C" __global__ void gt_compare(Matrix C, const float* ref, const float* absAB, float tolScale, int exact,
                                      u64* stats) {
  const long long n = C.count * C.rows * C.cols;
  u64 bad = 0, nonFinite = 0, first = ~0ull;
  unsigned maxBits = 0;
  for (long long i = firstIndex(); i < n; i += stride()) {
    float c = *element(C, i), r = ref[i];
    bool finite = isfinite(c);
    float ratio;
    if (!finite) {
      ++nonFinite;
      ratio = __int_as_float(0x7f800000);
    } else {
      float err = fabsf(c - r), tol = tolScale * absAB[i];
      ratio = tol > 0.0f ? err / tol : (err == 0.0f ? 0.0f : __int_as_float(0x7f800000));
      if (ratio != ratio) ratio = __int_as_float(0x7f800000);
    }
    bool isBad = exact ? !(c == r) : (!finite || !(ratio <= 1.0f));
    if (isBad) {
      ++bad;
      if ((u64)i < first) first = (u64)i;
    }
    maxBits = max(maxBits, __float_as_uint(ratio));
  }
  publish(bad, nonFinite, maxBits, first, stats);
}

__device__ __forceinline__ int valueClass(float x) { return x != x ? 1 : isinf(x) ? (x > 0 ? 2 : 3) : 0; }

// Counts the elements whose class (finite, NaN, +Inf, -Inf) differs between two packed results.
extern "C" __global__ void gt_class_mismatch(const float* C, const float* want, long long n, u64* stats) {
  u64 count = 0, first = ~0ull;
  for (long long i = firstIndex(); i < n; i += stride())
    if (valueClass(C[i]) != valueClass(want[i])) {
      ++count;
      if ((u64)i < first) first = (u64)i;
    }
  publish(count, 0, 0, first, stats);
}

// Counts the words of an allocation that no longer hold the canary.
extern "C" __global__ void gt_scan_canaries(const unsigned* p, long long n, unsigned canary, u64* stats) {
  u64 changed = 0, first = ~0ull;
  for (long long i = firstIndex(); i < n; i += stride()) {
    if (p[i] != canary) {
      ++changed;
      if ((u64)i < first) first = (u64)i;
    }
  }
  publish(changed, 0, 0, first, stats);
}

// Holds the stream until the host writes `ticket` (or more) into *word, a host-mapped word, or
// until timeoutNs pass: the timer's gate (tuner/worker/LaunchGate.hpp). One thread; a volatile
// read each turn sees the host's write once it crosses PCIe.
extern "C" __global__ void gt_hold(const volatile unsigned* word, unsigned ticket, u64 timeoutNs) {
  u64 start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    if ((int)(*word - ticket) >= 0) return;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < timeoutNs);
}

// One result per thread, no tiling: too simple to be wrong. Block 16x16, grid over N and M.
extern "C" __global__ void gt_canary_sgemm(int M, int N, int K, float alpha, const float* A, int lda,
                                           const float* B, int ldb, float beta, float* C, int ldc) {
  int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[(long long)row * lda + k] * B[(long long)k * ldb + col];
  float* c = C + (long long)row * ldc + col;
  *c = beta == 0.0f ? alpha * acc : alpha * acc + beta * *c;
}
)CUDA";

}  // namespace

const std::string& HelperKernels::source() {
  static const std::string source = std::string(workerKernelPrelude()) + kBody;
  return source;
}
const char* HelperKernels::anchorKernel() { return "gt_compare"; }

HelperKernels::HelperKernels(const std::string& arch, CUstream stream, int smCount)
    : stream_(stream), smCount_(std::max(smCount, 1)) {
  module_ = loadWorkerModule(source(), anchorKernel(), arch, "worker helper kernels",
                             {{&fillInt_, "gt_fill_int"}, {&fillNormal_, "gt_fill_normal"}, {&fillBits_, "gt_fill_bits"},
                              {&copyInto_, "gt_copy_into"}, {&absCopy_, "gt_abs_copy"}, {&compare_, "gt_compare"},
                              {&scanCanaries_, "gt_scan_canaries"}, {&canary_, "gt_canary_sgemm"},
                              {&classMismatch_, "gt_class_mismatch"}, {&hold_, "gt_hold"}});
  stats_ = DeviceBuffer(4 * sizeof(std::uint64_t));
}

HelperKernels::~HelperKernels() {
  if (module_) CudaDriver::get().cuModuleUnload(module_);
}

void HelperKernels::launch(CUfunction f, long long n, void** args) const {
  launchGridStride(f, n, args, stream_, smCount_, "launching a worker helper kernel");
}

void HelperKernels::hold(CUdeviceptr word, std::uint32_t ticket, std::uint64_t timeoutNs) const {
  void* args[] = {&word, &ticket, &timeoutNs};
  const auto& cu = CudaDriver::get();
  cu.check(cu.cuLaunchKernel(hold_, 1, 1, 1, 1, 1, 1, 0, stream_, args, nullptr), "launching the timer's gate");
}

void HelperKernels::fillInt(CUdeviceptr p, long long n, std::uint32_t seed, int range) const {
  void* args[] = {&p, &n, &seed, &range};
  launch(fillInt_, n, args);
}

void HelperKernels::fillNormal(CUdeviceptr p, long long n, std::uint32_t seed) const {
  void* args[] = {&p, &n, &seed};
  launch(fillNormal_, n, args);
}

void HelperKernels::fillConstant(CUdeviceptr p, long long n, float value) const {
  fillBits(DeviceMatrix::vector(p, n), std::bit_cast<std::uint32_t>(value));
}

void HelperKernels::fillBits(const DeviceMatrix& m, std::uint32_t bits) const {
  DeviceMatrix matrix = m;
  void* args[] = {&matrix, &bits};
  launch(fillBits_, m.elems(), args);
}

void HelperKernels::copyInto(CUdeviceptr src, const DeviceMatrix& dst, bool transpose) const {
  DeviceMatrix matrix = dst;
  int transposeFlag = transpose ? 1 : 0;
  void* args[] = {&src, &matrix, &transposeFlag};
  launch(copyInto_, dst.elems(), args);
}

void HelperKernels::absCopy(CUdeviceptr src, CUdeviceptr dst, long long n) const {
  void* args[] = {&src, &dst, &n};
  launch(absCopy_, n, args);
}

std::array<std::uint64_t, 4> HelperKernels::runStats(CUfunction f, long long n, void** args) const {
  const auto& cu = CudaDriver::get();
  std::array<std::uint64_t, 4> out = {0, 0, 0, ~0ull};
  cu.check(cu.cuMemcpyHtoD(stats_.ptr(), out.data(), sizeof out), "resetting the checker");
  launch(f, n, args);
  cu.check(cu.cuStreamSynchronize(stream_), "running the checker");
  cu.check(cu.cuMemcpyDtoH(out.data(), stats_.ptr(), sizeof out), "reading the checker's counts");
  return out;
}

CompareStats HelperKernels::compare(const DeviceMatrix& C, CUdeviceptr ref, CUdeviceptr absAB, float tolScale,
                                    bool exact) const {
  DeviceMatrix matrix = C;
  CUdeviceptr stats = stats_.ptr();
  int exactFlag = exact ? 1 : 0;
  void* args[] = {&matrix, &ref, &absAB, &tolScale, &exactFlag, &stats};
  const auto out = runStats(compare_, C.elems(), args);
  CompareStats s;
  s.bad = out[0];
  s.nonFinite = out[1];
  s.maxRatio = std::bit_cast<float>(static_cast<std::uint32_t>(out[2]));
  s.firstBad = out[3];
  return s;
}

CompareStats HelperKernels::classMismatch(CUdeviceptr C, CUdeviceptr want, long long n) const {
  CUdeviceptr stats = stats_.ptr();
  void* args[] = {&C, &want, &n, &stats};
  const auto out = runStats(classMismatch_, n, args);
  CompareStats s;
  s.bad = out[0];
  s.firstBad = out[3];
  return s;
}

GuardStats HelperKernels::scanCanaries(CUdeviceptr alloc, long long allocElems, std::uint32_t canary) const {
  CUdeviceptr stats = stats_.ptr();
  void* args[] = {&alloc, &allocElems, &canary, &stats};
  const auto out = runStats(scanCanaries_, allocElems, args);
  return GuardStats{out[0], out[3]};
}

void HelperKernels::canarySgemm(int M, int N, int K, float alpha, CUdeviceptr A, CUdeviceptr B, float beta,
                                CUdeviceptr C) const {
  int lda = K, ldb = N, ldc = N;
  void* args[] = {&M, &N, &K, &alpha, &A, &lda, &B, &ldb, &beta, &C, &ldc};
  const auto& cu = CudaDriver::get();
  cu.check(cu.cuLaunchKernel(canary_, static_cast<unsigned>((N + 15) / 16), static_cast<unsigned>((M + 15) / 16), 1, 16,
                             16, 1, 0, stream_, args, nullptr),
           "launching the canary kernel");
}

}  // namespace gemmtune
