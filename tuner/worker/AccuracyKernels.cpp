#include "AccuracyKernels.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "CudaDriver.hpp"
#include "WorkerModule.hpp"

namespace gemmtune {

namespace {

constexpr int kRefTile = 64;  // ak_reference_f64's C tile (16×16 threads, 4×4 elements each)

const char* const kBody = R"CUDA(
// gemmtune worker accuracy kernels: error data sets, FP64 reference, error measures, Inf/NaN classes.

extern "C" __global__ void ak_fill_uniform(float* p, long long n, unsigned seed) {
  for (long long i = firstIndex(); i < n; i += stride()) {
    u64 h = mix64(((u64)seed << 40) ^ (u64)i);
    p[i] = (float)((double)(h >> 11) * 1.1102230246251565e-16 - 0.5);  // 53 random bits, rounded once
  }
}

// Every row (byRow) or column of count packed rows x cols matrices times 2^k, k in [-60, 60].
extern "C" __global__ void ak_scale_lines(float* p, long long count, long long rows, long long cols, int byRow,
                                          unsigned seed) {
  const long long per = rows * cols, n = count * per;
  for (long long i = firstIndex(); i < n; i += stride()) {
    const long long b = i / per, line = byRow ? i % per / cols : i % cols;
    const u64 h = mix64(((u64)seed << 40) ^ (u64)(b * (byRow ? rows : cols) + line));
    p[i] = ldexpf(p[i], (int)(h % 121ull) - 60);
  }
}

// C64 = A B and absAB = |A||B| in double; A M x K, B K x N, packed, batch in grid z. 64 x 64 tiles
// (N tiles in grid x, M tiles strided over grid y), 16 x 16 threads with 4 x 4 elements each, k
// tiles of 16 in shared memory.
extern "C" __global__ void __launch_bounds__(256) ak_reference_f64(const float* A, const float* B, double* C64,
    double* absAB, int M, int N, int K) {
  __shared__ double As[16][65], Bs[16][65];
  const long long b = blockIdx.z;
  A += b * M * (long long)K;
  B += b * K * (long long)N;
  C64 += b * M * (long long)N;
  absAB += b * M * (long long)N;
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16, n0 = blockIdx.x * 64;
  for (long long mTile = blockIdx.y; mTile * 64 < M; mTile += gridDim.y) {  // grid y is capped at 65535
  const int m0 = (int)(mTile * 64);
  double acc[4][4] = {}, mag[4][4] = {};
  for (int k0 = 0; k0 < K; k0 += 16) {
    for (int e = threadIdx.x; e < 64 * 16; e += 256) {
      const int am = e / 16, ak = e % 16, bk = e / 64, bn = e % 64;
      As[ak][am] = m0 + am < M && k0 + ak < K ? (double)A[(long long)(m0 + am) * K + k0 + ak] : 0.0;
      Bs[bk][bn] = k0 + bk < K && n0 + bn < N ? (double)B[(long long)(k0 + bk) * N + n0 + bn] : 0.0;
    }
    __syncthreads();
    for (int k = 0; k < 16; ++k) {
      double a[4], bb[4];
      for (int i = 0; i < 4; ++i) a[i] = As[k][ty + 16 * i];
      for (int j = 0; j < 4; ++j) bb[j] = Bs[k][tx + 16 * j];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) {
          acc[i][j] = fma(a[i], bb[j], acc[i][j]);
          mag[i][j] = fma(fabs(a[i]), fabs(bb[j]), mag[i][j]);
        }
    }
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const int m = m0 + ty + 16 * i, n = n0 + tx + 16 * j;
      if (m < M && n < N) {
        C64[(long long)m * N + n] = acc[i][j];
        absAB[(long long)m * N + n] = mag[i][j];
      }
    }
  __syncthreads();  // the next row of tiles refills the shared tiles
  }
}

// Elements whose sum of |a||b| exceeds FP32's range are left out (wide exponents at a very long K):
// there a partial sum may overflow in one summation order and not in another. Below it every
// partial sum of every order is finite, so no judged element overflows in any correct FP32 GEMM.
// Per block b: partial[3b] max relative error, [3b+1] sum of squared errors, [3b+2] sum of squared
// references, each reduced in a fixed order (no atomics), so the figures are the same run to run.
extern "C" __global__ void __launch_bounds__(256) ak_errors(const float* C, const double* C64, const double* absAB,
                                                           long long n, double* partial) {
  const double inf = __longlong_as_double(0x7ff0000000000000ll);
  double v[3] = {0, 0, 0};  // worst, sum of squared errors, sum of squared references
  for (long long i = firstIndex(); i < n; i += stride()) {
    const double c = C[i], r = C64[i], err = fabs(c - r);
    if (absAB[i] > 3.4028234663852886e38) continue;  // a partial sum may overflow FP32 in some order
    double rel = absAB[i] > 0 ? err / absAB[i] : (err == 0 ? 0 : inf);
    if (!(rel == rel)) rel = inf;  // C is NaN
    v[0] = fmax(v[0], rel);
    v[1] += err * err;
    v[2] += r * r;
  }
  __shared__ double warps[8][3];
  for (int off = 16; off > 0; off >>= 1) {
    v[0] = fmax(v[0], __shfl_down_sync(0xffffffffu, v[0], off));
    v[1] += __shfl_down_sync(0xffffffffu, v[1], off);
    v[2] += __shfl_down_sync(0xffffffffu, v[2], off);
  }
  if ((threadIdx.x & 31) == 0)
    for (int j = 0; j < 3; ++j) warps[threadIdx.x / 32][j] = v[j];
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < 8; ++w) {
      v[0] = fmax(v[0], warps[w][0]);
      v[1] += warps[w][1];
      v[2] += warps[w][2];
    }
    for (int j = 0; j < 3; ++j) partial[3 * blockIdx.x + j] = v[j];
  }
}

)CUDA";

}  // namespace

const std::string& AccuracyKernels::source() {
  static const std::string source = std::string(workerKernelPrelude()) + kBody;
  return source;
}
const char* AccuracyKernels::anchorKernel() { return "ak_errors"; }

AccuracyKernels::AccuracyKernels(const std::string& arch, CUstream stream, int smCount)
    : stream_(stream), smCount_(std::max(smCount, 1)) {
  module_ = loadWorkerModule(source(), anchorKernel(), arch, "worker accuracy kernels",
                             {{&fillUniform_, "ak_fill_uniform"}, {&scaleLines_, "ak_scale_lines"},
                              {&reference_, "ak_reference_f64"}, {&errors_, "ak_errors"}});
  static_assert(kWorkerThreads == 256, "ak_errors reduces over exactly 8 warps");
  partials_ = DeviceBuffer(3 * sizeof(double) * static_cast<std::size_t>(kWorkerBlocksPerSm) * static_cast<std::size_t>(smCount_));
}

AccuracyKernels::~AccuracyKernels() {
  if (module_) CudaDriver::get().cuModuleUnload(module_);
}

void AccuracyKernels::launch(CUfunction f, long long n, void** args) const {
  launchGridStride(f, n, args, stream_, smCount_, "launching a worker accuracy kernel");
}

void AccuracyKernels::fillUniform(CUdeviceptr p, long long n, std::uint32_t seed) const {
  void* args[] = {&p, &n, &seed};
  launch(fillUniform_, n, args);
}

void AccuracyKernels::scaleLines(CUdeviceptr p, long long count, long long rows, long long cols, bool byRow,
                                 std::uint32_t seed) const {
  int rowFlag = byRow ? 1 : 0;
  void* args[] = {&p, &count, &rows, &cols, &rowFlag, &seed};
  launch(scaleLines_, count * rows * cols, args);
}

void AccuracyKernels::referenceF64(CUdeviceptr A, CUdeviceptr B, CUdeviceptr C64, CUdeviceptr absAB, long long M,
                                   long long N, long long K, long long batch) const {
  int m = static_cast<int>(M), n = static_cast<int>(N), k = static_cast<int>(K);
  void* args[] = {&A, &B, &C64, &absAB, &m, &n, &k};
  const auto& cu = CudaDriver::get();
  cu.check(cu.cuLaunchKernel(reference_, static_cast<unsigned>((N + kRefTile - 1) / kRefTile),
                             static_cast<unsigned>(std::min<long long>((M + kRefTile - 1) / kRefTile, 65535)),
                             static_cast<unsigned>(batch), kWorkerThreads, 1, 1, 0, stream_, args, nullptr),
           "launching the FP64 reference");
}

ErrorFigures AccuracyKernels::errors(CUdeviceptr C, CUdeviceptr C64, CUdeviceptr absAB, long long n) const {
  const auto& cu = CudaDriver::get();
  CUdeviceptr partial = partials_.ptr();
  void* args[] = {&C, &C64, &absAB, &n, &partial};
  launch(errors_, n, args);
  std::vector<double> out(3 * static_cast<std::size_t>(gridStrideBlocks(n, smCount_)));
  cu.check(cu.cuStreamSynchronize(stream_), "measuring the error");
  cu.check(cu.cuMemcpyDtoH(out.data(), partial, out.size() * sizeof(double)), "reading the error measures");
  double worst = 0, sumErr = 0, sumRef = 0;  // block after block: a fixed order
  for (std::size_t b = 0; b < out.size(); b += 3) {
    worst = std::max(worst, out[b]);
    sumErr += out[b + 1];
    sumRef += out[b + 2];
  }
  // 0/0 (an all-zero reference) is no error; x/0 is.
  const double frob = sumRef > 0 ? std::sqrt(sumErr / sumRef) : (sumErr > 0 ? HUGE_VAL : 0.0);
  return ErrorFigures{worst, frob};
}

}  // namespace gemmtune
