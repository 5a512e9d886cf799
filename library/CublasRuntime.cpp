#include "CublasRuntime.hpp"

#include <cublas_api.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <climits>

namespace gemmtune::library {

// Types from the header (unevaluated decltype only); the symbols from the loaded library.
struct CublasRuntime::Api {
  decltype(&::cublasCreate_v2) create = nullptr;
  decltype(&::cublasSetStream_v2) setStream = nullptr;
  decltype(&::cublasSgemm_v2) sgemm = nullptr;
  decltype(&::cublasSgemmStridedBatched) sgemmStridedBatched = nullptr;
  decltype(&::cublasSgemmBatched) sgemmBatched = nullptr;
  decltype(&::cublasGetStatusName) statusName = nullptr;
};

namespace {

template <typename Fn>
bool resolve(void* lib, const char* symbol, Fn& fn, const std::string& name, std::string& why) {
  fn = reinterpret_cast<Fn>(::dlsym(lib, symbol));
  if (!fn) why = fmt::format("{} lacks {} (cuBLAS 12 or 13 is needed)", name, symbol);
  return fn != nullptr;
}

std::string statusText(const CublasRuntime::Api& api, cublasStatus_t s) {
  const char* n = api.statusName ? api.statusName(s) : nullptr;
  return n ? n : fmt::format("cublasStatus {}", static_cast<int>(s));
}

}  // namespace

CublasRuntime* CublasRuntime::get(std::string& why) {
  // Loaded once for the process: every Library shares it, and it outlives them all (a handle
  // destroyed after its context would be undefined; the process's end releases everything).
  static std::string failure;
  static CublasRuntime* runtime = [] {
    std::string errors;
    for (const char* name : {"libcublas.so.13", "libcublas.so.12"}) {
      void* lib = ::dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (!lib) {
        const char* e = ::dlerror();
        errors += fmt::format("{}{}", errors.empty() ? "" : "; ", e ? e : name);
        continue;
      }
      auto* api = new Api;
      std::string missing;
      if (resolve(lib, "cublasCreate_v2", api->create, name, missing) &&
          resolve(lib, "cublasSetStream_v2", api->setStream, name, missing) &&
          resolve(lib, "cublasSgemm_v2", api->sgemm, name, missing) &&
          resolve(lib, "cublasSgemmStridedBatched", api->sgemmStridedBatched, name, missing) &&
          resolve(lib, "cublasSgemmBatched", api->sgemmBatched, name, missing)) {
        api->statusName = reinterpret_cast<decltype(api->statusName)>(::dlsym(lib, "cublasGetStatusName"));
        return new CublasRuntime(lib, name, api);
      }
      delete api;
      errors += fmt::format("{}{}", errors.empty() ? "" : "; ", missing);
    }
    failure = fmt::format("cuBLAS cannot be loaded ({}): install the CUDA math libraries or add their directory to "
                          "LD_LIBRARY_PATH",
                          errors);
    return static_cast<CublasRuntime*>(nullptr);
  }();
  if (!runtime) why = failure;
  return runtime;
}

void* CublasRuntime::handleFor(unsigned long long context, CUstream stream, std::string& error) {
  auto& h = handles_[{context, stream}];
  if (h) return h;
  cublasHandle_t made = nullptr;
  if (auto s = api_->create(&made); s != CUBLAS_STATUS_SUCCESS) {
    handles_.erase({context, stream});
    error = fmt::format("cublasCreate ({}) failed: {}", name_, statusText(*api_, s));
    return nullptr;
  }
  if (auto s = api_->setStream(made, reinterpret_cast<cudaStream_t>(stream)); s != CUBLAS_STATUS_SUCCESS) {
    handles_.erase({context, stream});  // the handle is leaked rather than destroyed: no destroy is resolved
    error = fmt::format("cublasSetStream failed: {}", statusText(*api_, s));
    return nullptr;
  }
  h = made;
  return h;
}

bool CublasRuntime::sgemm(unsigned long long context, CUstream stream, const GemmCall& c, std::string& error) {
  if (c.batch > INT_MAX) {
    error = fmt::format("cuBLAS takes at most {} batches, the call has {}", INT_MAX, c.batch);
    return false;
  }
  std::lock_guard lock(mutex_);
  auto h = static_cast<cublasHandle_t>(handleFor(context, stream, error));
  if (!h) return false;
  // cuBLAS is column-major: the row-major C = op(A)·op(B) is the column-major Cᵀ = op(B)ᵀ·op(A)ᵀ,
  // the same buffers with the operands swapped and m = N, n = M; a row-major matrix read as
  // column-major is its transpose, so each operand keeps its own op flag and leading dimension.
  const cublasOperation_t opA = c.opA == Op::T ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t opB = c.opB == Op::T ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int batch = static_cast<int>(c.batch);
  cublasStatus_t s;
  const char* what;
  if (c.pointerArrays()) {
    what = "cublasSgemmBatched";
    s = api_->sgemmBatched(h, opB, opA, c.n, c.m, c.k, &c.alpha, c.arrayB, c.ldb, c.arrayA, c.lda, &c.beta, c.arrayC,
                           c.ldc, batch);
  } else if (batch > 1) {
    what = "cublasSgemmStridedBatched";
    s = api_->sgemmStridedBatched(h, opB, opA, c.n, c.m, c.k, &c.alpha, c.b, c.ldb, c.strideB, c.a, c.lda, c.strideA,
                                  &c.beta, c.c, c.ldc, c.strideC, batch);
  } else {
    what = "cublasSgemm";
    s = api_->sgemm(h, opB, opA, c.n, c.m, c.k, &c.alpha, c.b, c.ldb, c.a, c.lda, &c.beta, c.c, c.ldc);
  }
  if (s == CUBLAS_STATUS_SUCCESS) return true;
  error = fmt::format("{} ({}) failed for {}x{}x{} batch {}: {}", what, name_, c.m, c.n, c.k, c.batch,
                      statusText(*api_, s));
  return false;
}

}  // namespace gemmtune::library
