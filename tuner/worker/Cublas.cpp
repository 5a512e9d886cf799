#include "Cublas.hpp"

#include <climits>

#include "gemmtune/Errors.hpp"

namespace gemmtune {

Cublas::Cublas(CUstream stream) : stream_(stream) {
  std::string why;
  lib_ = CublasLibrary::get(why);
  if (!lib_) throw UnavailableError(why);
  library_ = lib_->name();
  if (int s = lib_->create(handle_, why); s != 0) throw CublasError(s, why);
  if (int s = lib_->setStream(handle_, stream, why); s != 0) {
    lib_->destroy(handle_);
    throw CublasError(s, why);
  }
  version_ = lib_->version(handle_);
}

Cublas::~Cublas() {
  if (lt_) lt_->destroy(ltHandle_);
  lib_->destroy(handle_);
}

void Cublas::setMath(Math math) const {
  std::string error;
  if (int s = lib_->setMathMode(handle_, math == Math::Pedantic, error); s != 0) throw CublasError(s, error);
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
  setMath(math);
  std::string error;
  if (int s = lib_->rowMajorSgemm(handle_, a, error); s != 0) throw CublasError(s, error);
}

bool Cublas::openLt(std::string& why) {
  if (ltHandle_) return true;
  if (!ltFailure_.empty()) {  // once failed, failed: no workspace made and freed on every call
    why = ltFailure_;
    return false;
  }
  const CublasLtLibrary* lt = CublasLtLibrary::get(why);
  if (!lt) {
    ltFailure_ = why;
    return false;
  }
  ltWorkspace_ = DeviceBuffer(CublasLtLibrary::kWorkspaceBytes);  // first: a throw leaks no handle
  void* handle = nullptr;
  if (int s = lt->create(handle, why); s != 0) {
    ltWorkspace_ = DeviceBuffer();
    ltFailure_ = why;
    return false;
  }
  lt_ = lt;
  ltHandle_ = handle;
  return true;
}

std::vector<CublasLtAlgo> Cublas::ltAlgorithms(const SgemmArgs& args, std::size_t limit, std::string& why) {
  std::vector<CublasLtAlgo> out;
  if (openLt(why)) lt_->algorithms(ltHandle_, args, CublasLtLibrary::kWorkspaceBytes, limit, out, why);
  return out;
}

void Cublas::gemmLt(const CublasLtAlgo& algo, const SgemmArgs& args) {
  std::string error;
  if (!openLt(error)) throw UnavailableError(error);
  if (int s = lt_->rowMajorMatmul(ltHandle_, args, algo, ltWorkspace_.ptr(), CublasLtLibrary::kWorkspaceBytes, stream_, error); s != 0)
    throw CublasError(s, error);
}

}  // namespace gemmtune
