#include "CublasLibrary.hpp"

#include <cublas_api.h>
#include <fmt/format.h>

#include "DynamicLibrary.hpp"

namespace gemmtune {

// Types from the header (unevaluated decltype only); the symbols from the loaded library.
struct CublasLibrary::Api {
  decltype(&::cublasCreate_v2) create = nullptr;
  decltype(&::cublasDestroy_v2) destroy = nullptr;
  decltype(&::cublasSetStream_v2) setStream = nullptr;
  decltype(&::cublasSetMathMode) setMathMode = nullptr;
  decltype(&::cublasGetVersion_v2) getVersion = nullptr;
  decltype(&::cublasSgemm_v2) sgemm = nullptr;
  decltype(&::cublasSgemmStridedBatched) sgemmStridedBatched = nullptr;
  decltype(&::cublasSgemmBatched) sgemmBatched = nullptr;
  decltype(&::cublasGetStatusName) statusName = nullptr;  // optional
};

namespace {

constexpr const char* kNeeded = "cuBLAS 12 or 13";

// The entry points of `lib`, or null with `missing` set.
const CublasLibrary::Api* resolveAll(void* lib, const char* name, std::string& missing) {
  auto* api = new CublasLibrary::Api;
  if (resolveSymbol(lib, "cublasCreate_v2", api->create, name, kNeeded, missing) &&
      resolveSymbol(lib, "cublasDestroy_v2", api->destroy, name, kNeeded, missing) &&
      resolveSymbol(lib, "cublasSetStream_v2", api->setStream, name, kNeeded, missing) &&
      resolveSymbol(lib, "cublasSetMathMode", api->setMathMode, name, kNeeded, missing) &&
      resolveSymbol(lib, "cublasGetVersion_v2", api->getVersion, name, kNeeded, missing) &&
      resolveSymbol(lib, "cublasSgemm_v2", api->sgemm, name, kNeeded, missing) &&
      resolveSymbol(lib, "cublasSgemmStridedBatched", api->sgemmStridedBatched, name, kNeeded, missing) &&
      resolveSymbol(lib, "cublasSgemmBatched", api->sgemmBatched, name, kNeeded, missing)) {
    api->statusName = reinterpret_cast<decltype(api->statusName)>(::dlsym(lib, "cublasGetStatusName"));
    return api;
  }
  delete api;
  return nullptr;
}

}  // namespace

const CublasLibrary* CublasLibrary::get(std::string& why) {
  static std::string failure;
  static const CublasLibrary* loaded = [] {
    std::string errors;
    const char* name = nullptr;
    if (const Api* api = openFirst<Api>({"libcublas.so.13", "libcublas.so.12"}, resolveAll, name, errors))
      return static_cast<const CublasLibrary*>(new CublasLibrary(name, api));  // never freed, as the library
    failure = fmt::format("cuBLAS cannot be loaded ({}): install the CUDA math libraries or add their directory to "
                          "LD_LIBRARY_PATH",
                          errors);
    return static_cast<const CublasLibrary*>(nullptr);
  }();
  if (!loaded) why = failure;
  return loaded;
}

std::string CublasLibrary::statusText(int s) const {
  const char* n = api_->statusName ? api_->statusName(static_cast<cublasStatus_t>(s)) : nullptr;
  return n ? n : fmt::format("cublasStatus {}", s);
}

int CublasLibrary::create(void*& handle, std::string& error) const {
  cublasHandle_t h = nullptr;
  const cublasStatus_t s = api_->create(&h);
  if (s != CUBLAS_STATUS_SUCCESS) error = fmt::format("cublasCreate ({}) failed: {}", name_, statusText(s));
  handle = h;
  return s;
}

void CublasLibrary::destroy(void* handle) const {
  if (handle) api_->destroy(static_cast<cublasHandle_t>(handle));
}

int CublasLibrary::setStream(void* handle, CUstream stream, std::string& error) const {
  const cublasStatus_t s = api_->setStream(static_cast<cublasHandle_t>(handle), reinterpret_cast<cudaStream_t>(stream));
  if (s != CUBLAS_STATUS_SUCCESS) error = fmt::format("cublasSetStream failed: {}", statusText(s));
  return s;
}

int CublasLibrary::setMathMode(void* handle, bool pedantic, std::string& error) const {
  const cublasStatus_t s =
      api_->setMathMode(static_cast<cublasHandle_t>(handle), pedantic ? CUBLAS_PEDANTIC_MATH : CUBLAS_DEFAULT_MATH);
  if (s != CUBLAS_STATUS_SUCCESS) error = fmt::format("cublasSetMathMode failed: {}", statusText(s));
  return s;
}

int CublasLibrary::version(void* handle) const {
  int v = 0;
  api_->getVersion(static_cast<cublasHandle_t>(handle), &v);
  return v;
}

int CublasLibrary::rowMajorSgemm(void* handle, const SgemmArgs& a, std::string& error) const {
  auto h = static_cast<cublasHandle_t>(handle);
  // cuBLAS is column-major: row-major C = op(A)·op(B) is column-major Cᵀ = op(B)ᵀ·op(A)ᵀ, the
  // same buffers with the operands swapped and m = N, n = M; a row-major matrix read as
  // column-major is its transpose, so each operand keeps its own op flag and leading dimension.
  const cublasOperation_t opA = a.layout.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t opB = a.layout.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  const auto* A = reinterpret_cast<const float*>(a.a);
  const auto* B = reinterpret_cast<const float*>(a.b);
  auto* C = reinterpret_cast<float*>(a.c);
  cublasStatus_t s;
  const char* what;
  if (a.batch.arrayA != 0) {
    // The kernels' pointer arrays are device arrays of 8-byte float pointers, as cuBLAS takes them.
    what = "cublasSgemmBatched";
    s = api_->sgemmBatched(h, opB, opA, a.n, a.m, a.k, &a.alpha, reinterpret_cast<const float* const*>(a.batch.arrayB),
                           a.ldb, reinterpret_cast<const float* const*>(a.batch.arrayA), a.lda, &a.beta,
                           reinterpret_cast<float* const*>(a.batch.arrayC), a.ldc, a.batch.count);
  } else if (a.batch.count > 1) {
    what = "cublasSgemmStridedBatched";
    s = api_->sgemmStridedBatched(h, opB, opA, a.n, a.m, a.k, &a.alpha, B, a.ldb, a.batch.strideB, A, a.lda,
                                  a.batch.strideA, &a.beta, C, a.ldc, a.batch.strideC, a.batch.count);
  } else {
    what = "cublasSgemm";
    s = api_->sgemm(h, opB, opA, a.n, a.m, a.k, &a.alpha, B, a.ldb, A, a.lda, &a.beta, C, a.ldc);
  }
  if (s != CUBLAS_STATUS_SUCCESS)
    error = fmt::format("{} ({}) failed for {}: {}", what, name_, problemOf(a).text(), statusText(s));
  return s;
}

}  // namespace gemmtune
