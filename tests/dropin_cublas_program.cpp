// A program written against cuBLAS, and nothing else (it does not know gemmtune): every entry point
// the drop-in defines, in every op combination, host and device scalars, strided and pointer-array
// batches, beta 0 over a NaN-filled C, K = 0 and M = 0, and every invalid argument. It prints one
// line per case, `case NAME status S` plus `err E bound B` where it checks the result against an
// FP64 product on the host; it exits 1 when a result exceeds its bound. dropin_gpu_test.cpp runs
// it with and without libgemmtune_cublas.so preloaded and compares.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Dev {
  float* p = nullptr;
  explicit Dev(const std::vector<float>& h) {
    cudaMalloc(&p, std::max<size_t>(h.size(), 1) * 4);
    cudaMemcpy(p, h.data(), h.size() * 4, cudaMemcpyHostToDevice);
  }
  ~Dev() { cudaFree(p); }
  std::vector<float> get(size_t n) const {
    std::vector<float> h(n);
    cudaMemcpy(h.data(), p, n * 4, cudaMemcpyDeviceToHost);
    return h;
  }
};

std::mt19937 rng(11);
std::vector<float> randoms(size_t n) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// One column-major problem: op(A) m x k, op(B) k x n, C m x n, padded leading dimensions, `batch`
// matrices each `gap` floats apart.
struct Problem {
  cublasOperation_t ta, tb;
  int m, n, k, batch;
  float alpha, beta;
  bool nanC = false;  // C filled with NaN (beta 0 must not read it)
  bool nanA = false;  // A filled with NaN (alpha 0 must not read it)
  // Dimensions below 0 (the invalid cases) size their buffers as 0.
  int rows(int x) const { return std::max(x, 0); }
  int lda() const { return rows(ta == CUBLAS_OP_N ? m : k) + 3; }
  int ldb() const { return rows(tb == CUBLAS_OP_N ? k : n) + 2; }
  int ldc() const { return rows(m) + 1; }
  long long sizeA() const { return (long long)lda() * rows(ta == CUBLAS_OP_N ? k : m) + 5; }
  long long sizeB() const { return (long long)ldb() * rows(tb == CUBLAS_OP_N ? n : k) + 5; }
  long long sizeC() const { return (long long)ldc() * rows(n) + 5; }
};

double at(const std::vector<float>& x, long long base, int ld, bool t, int r, int c) {
  return t ? x[base + (long long)r * ld + c] : x[base + (long long)c * ld + r];
}

// The worst |C - C64| over the bound 8·K·2^-24·(|α|·Σ|a||b| + |β|·|c|) + 1e-30, over every batch.
double worstRatio(const Problem& p, const std::vector<float>& a, const std::vector<float>& b,
                  const std::vector<float>& c0, const std::vector<float>& c) {
  double worst = 0;
  for (int q = 0; q < p.batch; ++q)
    for (int i = 0; i < p.m; ++i)
      for (int j = 0; j < p.n; ++j) {
        double sum = 0, mag = 0;
        for (int l = 0; l < p.k; ++l) {
          const double x = at(a, q * p.sizeA(), p.lda(), p.ta != CUBLAS_OP_N, i, l);
          const double y = at(b, q * p.sizeB(), p.ldb(), p.tb != CUBLAS_OP_N, l, j);
          sum += x * y, mag += std::fabs(x * y);
        }
        const long long ci = q * p.sizeC() + (long long)j * p.ldc() + i;
        const double old = p.beta == 0 ? 0 : c0[ci];
        const double want = (p.alpha == 0 ? 0.0 : p.alpha * sum) + p.beta * old;
        const double bound = 8.0 * std::max(p.k, 1) * std::ldexp(1.0, -24) *
                                 ((p.alpha == 0 ? 0.0 : std::fabs(p.alpha) * mag) + std::fabs(p.beta) * std::fabs(old)) +
                             1e-30;
        const double err = std::fabs(c[ci] - want);
        worst = std::max(worst, std::isfinite(c[ci]) ? err / bound : 1e30);
      }
  return worst;
}

// How many floats of C outside the product (ld padding, the tail after each batch) changed: a
// kernel must write only the M x N of each batch.
long long outsideChanged(const Problem& p, const std::vector<float>& c0, const std::vector<float>& c) {
  long long changed = 0;
  for (long long i = 0; i < (long long)c.size(); ++i) {
    const long long inBatch = i % p.sizeC(), row = inBatch % p.ldc(), col = inBatch / p.ldc();
    const bool inside = i / p.sizeC() < p.batch && col < p.n && row < p.m;
    if (!inside && std::memcmp(&c[i], &c0[i], sizeof(float)) != 0) ++changed;
  }
  return changed;
}

enum class Entry { sgemm, strided, batched, gemmEx, stridedEx, batchedEx };
const char* name(Entry e) {
  const char* names[] = {"sgemm", "strided", "batched", "gemmEx", "stridedEx", "batchedEx"};
  return names[static_cast<int>(e)];
}

int failures = 0;

void runCase(cublasHandle_t h, const std::string& label, Entry e, const Problem& p, bool deviceScalars) {
  const int slots = std::max(p.batch, 1);  // an invalid batch count still gets memory
  auto a = randoms(p.sizeA() * slots), b = randoms(p.sizeB() * slots), c0 = randoms(p.sizeC() * slots);
  if (p.nanC) c0.assign(c0.size(), std::nanf(""));
  if (p.nanA) a.assign(a.size(), std::nanf(""));
  Dev da(a), db(b), dc(c0), scalars({p.alpha, p.beta});
  std::vector<float*> pa, pb, pc;
  for (int q = 0; q < slots; ++q)
    pa.push_back(da.p + q * p.sizeA()), pb.push_back(db.p + q * p.sizeB()), pc.push_back(dc.p + q * p.sizeC());
  float** arrays = nullptr;
  cudaMalloc(&arrays, 3 * slots * sizeof(float*));
  cudaMemcpy(arrays, pa.data(), slots * sizeof(float*), cudaMemcpyHostToDevice);
  cudaMemcpy(arrays + slots, pb.data(), slots * sizeof(float*), cudaMemcpyHostToDevice);
  cudaMemcpy(arrays + 2 * slots, pc.data(), slots * sizeof(float*), cudaMemcpyHostToDevice);
  cublasSetPointerMode(h, deviceScalars ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST);
  const float* alpha = deviceScalars ? scalars.p : &p.alpha;
  const float* beta = deviceScalars ? scalars.p + 1 : &p.beta;
  const auto* aa = const_cast<const float* const*>(arrays);
  const auto* ab = const_cast<const float* const*>(arrays + slots);
  auto* ac = arrays + 2 * slots;
  cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
  const auto F = CUDA_R_32F;
  switch (e) {
    case Entry::sgemm: s = cublasSgemm(h, p.ta, p.tb, p.m, p.n, p.k, alpha, da.p, p.lda(), db.p, p.ldb(), beta, dc.p, p.ldc()); break;
    case Entry::strided:
      s = cublasSgemmStridedBatched(h, p.ta, p.tb, p.m, p.n, p.k, alpha, da.p, p.lda(), p.sizeA(), db.p, p.ldb(),
                                    p.sizeB(), beta, dc.p, p.ldc(), p.sizeC(), p.batch);
      break;
    case Entry::batched:
      s = cublasSgemmBatched(h, p.ta, p.tb, p.m, p.n, p.k, alpha, aa, p.lda(), ab, p.ldb(), beta, ac, p.ldc(), p.batch);
      break;
    case Entry::gemmEx:
      s = cublasGemmEx(h, p.ta, p.tb, p.m, p.n, p.k, alpha, da.p, F, p.lda(), db.p, F, p.ldb(), beta, dc.p, F, p.ldc(),
                       CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
      break;
    case Entry::stridedEx:
      s = cublasGemmStridedBatchedEx(h, p.ta, p.tb, p.m, p.n, p.k, alpha, da.p, F, p.lda(), p.sizeA(), db.p, F,
                                     p.ldb(), p.sizeB(), beta, dc.p, F, p.ldc(), p.sizeC(), p.batch,
                                     CUBLAS_COMPUTE_32F_PEDANTIC, CUBLAS_GEMM_DEFAULT);
      break;
    case Entry::batchedEx:
      s = cublasGemmBatchedEx(h, p.ta, p.tb, p.m, p.n, p.k, alpha, reinterpret_cast<const void* const*>(aa), F,
                              p.lda(), reinterpret_cast<const void* const*>(ab), F, p.ldb(), beta,
                              reinterpret_cast<void* const*>(ac), F, p.ldc(), p.batch, CUBLAS_COMPUTE_32F,
                              CUBLAS_GEMM_DEFAULT);
      break;
  }
  cudaDeviceSynchronize();
  std::printf("case %s status %d", label.c_str(), static_cast<int>(s));
  if (s == CUBLAS_STATUS_SUCCESS && p.m > 0 && p.n > 0 && p.batch > 0) {
    const auto c = dc.get(c0.size());
    const double r = worstRatio(p, a, b, c0, c);
    const long long outside = outsideChanged(p, c0, c);
    std::printf(" err/bound %.3g", r);
    if (outside > 0) std::printf(" outside-changed %lld", outside);
    if (r > 1 || outside > 0) ++failures, std::printf(" BAD");
  }
  std::printf("\n");
  cudaFree(arrays);
  cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST);
}

// Four threads, each with its own handle and stream, 20 calls each into their own C: each C must
// be its own product (a drop-in that mixed up streams, handles or prepared launches would not be).
void threads() {
  const Problem p{CUBLAS_OP_N, CUBLAS_OP_T, 96, 80, 72, 1, 1.0f, 0.0f};
  std::vector<std::thread> workers;
  std::vector<double> worst(4, 0);
  std::vector<int> statuses(4, 0);
  for (int t = 0; t < 4; ++t)
    workers.emplace_back([&, t] {
      std::mt19937 own(100 + t);
      std::uniform_real_distribution<float> d(-1.0f, 1.0f);
      std::vector<float> a(p.sizeA()), b(p.sizeB()), c0(p.sizeC(), 0.0f);
      for (auto& x : a) x = d(own);
      for (auto& x : b) x = d(own);
      Dev da(a), db(b), dc(c0);
      cublasHandle_t h = nullptr;
      cudaStream_t s = nullptr;
      cublasCreate(&h);
      cudaStreamCreate(&s);
      cublasSetStream(h, s);
      for (int i = 0; i < 20; ++i)
        statuses[t] |= cublasSgemm(h, p.ta, p.tb, p.m, p.n, p.k, &p.alpha, da.p, p.lda(), db.p, p.ldb(), &p.beta,
                                   dc.p, p.ldc());
      cudaStreamSynchronize(s);
      worst[t] = worstRatio(p, a, b, c0, dc.get(c0.size()));
      cublasDestroy(h);
      cudaStreamDestroy(s);
    });
  for (auto& w : workers) w.join();
  const double r = *std::max_element(worst.begin(), worst.end());
  std::printf("case threads status %d err/bound %.3g%s\n", statuses[0] | statuses[1] | statuses[2] | statuses[3], r,
              r > 1 ? " BAD" : "");
  if (r > 1) ++failures;
}

}  // namespace

int main() {
  cublasHandle_t h = nullptr;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return 2;
  const cublasOperation_t ops[] = {CUBLAS_OP_N, CUBLAS_OP_T};
  for (Entry e : {Entry::sgemm, Entry::strided, Entry::batched, Entry::gemmEx, Entry::stridedEx, Entry::batchedEx})
    for (auto ta : ops)
      for (auto tb : ops)
        for (bool device : {false, true}) {
          const bool batched = e != Entry::sgemm && e != Entry::gemmEx;
          Problem p{ta, tb, 37, 45, 29, batched ? 3 : 1, 1.5f, -0.5f};
          runCase(h, std::string(name(e)) + (ta ? "-t" : "-n") + (tb ? "t" : "n") + (device ? "-device" : "-host"), e,
                  p, device);
        }
  threads();
  runCase(h, "sgemm-beta0-nan-c", Entry::sgemm, {CUBLAS_OP_N, CUBLAS_OP_T, 64, 33, 17, 1, 1.0f, 0.0f, true}, false);
  Problem alpha0{CUBLAS_OP_N, CUBLAS_OP_N, 20, 30, 40, 1, 0.0f, 1.0f};
  alpha0.nanA = true;
  runCase(h, "sgemm-alpha0-nan-a", Entry::sgemm, alpha0, false);
  runCase(h, "sgemm-op-c", Entry::sgemm, {CUBLAS_OP_C, CUBLAS_OP_N, 37, 45, 29, 1, 1.0f, 1.0f}, false);
  runCase(h, "sgemm-k0", Entry::sgemm, {CUBLAS_OP_N, CUBLAS_OP_N, 5, 6, 0, 1, 1.0f, 2.0f}, false);
  runCase(h, "sgemm-m0", Entry::sgemm, {CUBLAS_OP_N, CUBLAS_OP_N, 0, 6, 4, 1, 1.0f, 2.0f}, false);
  runCase(h, "sgemm-negative-m", Entry::sgemm, {CUBLAS_OP_N, CUBLAS_OP_N, -1, 6, 4, 1, 1.0f, 0.0f}, false);
  runCase(h, "sgemm-negative-k", Entry::sgemm, {CUBLAS_OP_N, CUBLAS_OP_N, 3, 6, -4, 1, 1.0f, 0.0f}, false);
  runCase(h, "strided-negative-batch", Entry::strided, {CUBLAS_OP_N, CUBLAS_OP_N, 3, 6, 4, -1, 1.0f, 0.0f}, false);
  runCase(h, "batched-zero-batch", Entry::batched, {CUBLAS_OP_N, CUBLAS_OP_N, 3, 6, 4, 0, 1.0f, 0.0f}, false);
  // Leading dimensions one too small, an op that is not one, and no handle.
  float* d = nullptr;
  cudaMalloc(&d, 4096 * 4);
  const float one = 1, zero = 0;
  auto bad = [&](const char* label, cublasHandle_t handle, cublasOperation_t ta, int m, int n, int k, int lda, int ldb,
                 int ldc) {
    std::printf("case %s status %d\n", label,
                static_cast<int>(cublasSgemm(handle, ta, CUBLAS_OP_N, m, n, k, &one, d, lda, d, ldb, &zero, d, ldc)));
  };
  bad("lda-too-small-n", h, CUBLAS_OP_N, 8, 4, 4, 7, 4, 8);
  bad("lda-too-small-t", h, CUBLAS_OP_T, 8, 4, 5, 4, 5, 8);
  bad("ldb-too-small", h, CUBLAS_OP_N, 8, 4, 5, 8, 4, 8);
  bad("ldc-too-small", h, CUBLAS_OP_N, 8, 4, 5, 8, 5, 7);
  bad("op-invalid", h, static_cast<cublasOperation_t>(7), 8, 4, 5, 8, 5, 8);
  bad("null-handle", nullptr, CUBLAS_OP_N, 8, 4, 5, 8, 5, 8);
  cudaFree(d);
  cublasDestroy(h);
  std::printf("failures %d\n", failures);
  return failures ? 1 : 0;
}
