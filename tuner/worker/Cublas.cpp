#include "Cublas.hpp"

#include <cublas_api.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <climits>

#include "gemmtune/Errors.hpp"

namespace gemmtune {

// Types come from the header (unevaluated decltype only); the symbols from the loaded library.
struct Cublas::Api {
  decltype(&::cublasCreate_v2) create = nullptr;
  decltype(&::cublasDestroy_v2) destroy = nullptr;
  decltype(&::cublasSetStream_v2) setStream = nullptr;
  decltype(&::cublasSetMathMode) setMathMode = nullptr;
  decltype(&::cublasSgemm_v2) sgemm = nullptr;
  decltype(&::cublasSgemmStridedBatched) sgemmStridedBatched = nullptr;
  decltype(&::cublasSgemmBatched) sgemmBatched = nullptr;
  decltype(&::cublasGetVersion_v2) getVersion = nullptr;
  decltype(&::cublasGetStatusName) statusName = nullptr;
};

namespace {

template <typename Fn>
void resolve(void* lib, const char* name, Fn& fn, const std::string& library) {
  fn = reinterpret_cast<Fn>(::dlsym(lib, name));
  if (!fn) throw UnavailableError(fmt::format("{} lacks {} (need cuBLAS 12 or 13)", library, name));
}

std::string statusText(const Cublas::Api* api, cublasStatus_t s) {
  const char* n = api && api->statusName ? api->statusName(s) : nullptr;
  return n ? n : fmt::format("cublasStatus {}", static_cast<int>(s));
}

}  // namespace

Cublas::Cublas(CUstream stream) {
  std::string errors;
  for (const char* name : {"libcublas.so.13", "libcublas.so.12"}) {
    lib_ = ::dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib_) {
      library_ = name;
      break;
    }
    const char* e = ::dlerror();
    errors += fmt::format("{}{}", errors.empty() ? "" : "; ", e ? e : name);
  }
  if (!lib_)
    throw UnavailableError(fmt::format("cuBLAS not found ({}): install the CUDA math libraries or add their "
                                       "directory to LD_LIBRARY_PATH",
                                       errors));
  api_ = new Api;
  try {
    resolve(lib_, "cublasCreate_v2", api_->create, library_);
    resolve(lib_, "cublasDestroy_v2", api_->destroy, library_);
    resolve(lib_, "cublasSetStream_v2", api_->setStream, library_);
    resolve(lib_, "cublasSetMathMode", api_->setMathMode, library_);
    resolve(lib_, "cublasSgemm_v2", api_->sgemm, library_);
    resolve(lib_, "cublasSgemmStridedBatched", api_->sgemmStridedBatched, library_);
    resolve(lib_, "cublasSgemmBatched", api_->sgemmBatched, library_);
    resolve(lib_, "cublasGetVersion_v2", api_->getVersion, library_);
    resolve(lib_, "cublasGetStatusName", api_->statusName, library_);
    cublasHandle_t h = nullptr;
    if (auto s = api_->create(&h); s != CUBLAS_STATUS_SUCCESS)
      throw CublasError(s, fmt::format("cublasCreate failed: {}", statusText(api_, s)));
    handle_ = h;
    if (auto s = api_->setStream(h, reinterpret_cast<cudaStream_t>(stream)); s != CUBLAS_STATUS_SUCCESS)
      throw CublasError(s, fmt::format("cublasSetStream failed: {}", statusText(api_, s)));
    api_->getVersion(h, &version_);
  } catch (...) {
    if (handle_) api_->destroy(static_cast<cublasHandle_t>(handle_));
    delete api_;
    // The library stays loaded: cuBLAS registers process-wide state that unloading would strand.
    throw;
  }
}

Cublas::~Cublas() {
  if (handle_) api_->destroy(static_cast<cublasHandle_t>(handle_));
  delete api_;
}

void Cublas::sgemm(Math math, long long M, long long N, long long K, float alpha, CUdeviceptr A, CUdeviceptr B,
                   float beta, CUdeviceptr C, long long batch) const {
  if (M > INT_MAX || N > INT_MAX || K > INT_MAX || batch > INT_MAX)
    throw std::invalid_argument("cuBLAS SGEMM dimensions exceed int");
  SgemmArgs a{static_cast<int>(M), static_cast<int>(N), static_cast<int>(K), alpha, A, static_cast<int>(K), B,
              static_cast<int>(N), beta, C, static_cast<int>(N)};
  a.batch = BatchArg{M * K, K * N, M * N, 0, 0, 0, static_cast<int>(batch)};
  gemm(math, a);
}

void Cublas::gemm(Math math, const SgemmArgs& a) const {
  auto h = static_cast<cublasHandle_t>(handle_);
  // CUBLAS_DEFAULT_MATH never uses TF32 for SGEMM; pedantic also forbids reduced-precision
  // internal paths, which is what a reference needs.
  auto mode = math == Math::Pedantic ? CUBLAS_PEDANTIC_MATH : CUBLAS_DEFAULT_MATH;
  if (auto s = api_->setMathMode(h, mode); s != CUBLAS_STATUS_SUCCESS)
    throw CublasError(s, fmt::format("cublasSetMathMode failed: {}", statusText(api_, s)));
  // cuBLAS is column-major: row-major C = op(A)·op(B) is column-major C^T = op(B)^T·op(A)^T, i.e.
  // the same buffers with the operands swapped and m = N, n = M. A row-major matrix read as
  // column-major is its transpose, so each operand keeps its own op flag and leading dimension.
  const cublasOperation_t opA = a.layout.transA ? CUBLAS_OP_T : CUBLAS_OP_N, opB = a.layout.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  const auto* A = reinterpret_cast<const float*>(a.a);
  const auto* B = reinterpret_cast<const float*>(a.b);
  auto* C = reinterpret_cast<float*>(a.c);
  const bool arrays = a.batch.arrayA != 0;
  cublasStatus_t s;
  if (arrays) {
    // The kernels' pointer arrays are device arrays of 8-byte float pointers, as cuBLAS takes them.
    s = api_->sgemmBatched(h, opB, opA, a.n, a.m, a.k, &a.alpha, reinterpret_cast<const float* const*>(a.batch.arrayB),
                           a.ldb, reinterpret_cast<const float* const*>(a.batch.arrayA), a.lda, &a.beta,
                           reinterpret_cast<float* const*>(a.batch.arrayC), a.ldc, a.batch.count);
  } else if (a.batch.count > 1) {
    s = api_->sgemmStridedBatched(h, opB, opA, a.n, a.m, a.k, &a.alpha, B, a.ldb, a.batch.strideB, A, a.lda,
                                  a.batch.strideA, &a.beta, C, a.ldc, a.batch.strideC, a.batch.count);
  } else {
    s = api_->sgemm(h, opB, opA, a.n, a.m, a.k, &a.alpha, B, a.ldb, A, a.lda, &a.beta, C, a.ldc);
  }
  if (s != CUBLAS_STATUS_SUCCESS)
    throw CublasError(s, fmt::format("cublasSgemm{} ({}) failed: {}", arrays ? "Batched" : a.batch.count > 1 ? "StridedBatched" : "",
                                     problemOf(a).text(), statusText(api_, s)));
}

}  // namespace gemmtune
