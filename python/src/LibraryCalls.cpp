#include "LibraryCalls.hpp"

#include <array>
#include <atomic>
#include <mutex>
#include <stdexcept>
#include <string>

#include "CudaDriver.hpp"

namespace gemmtune::python {

Library& libraryFor(PrecisionClass precision) {
  static std::array<std::atomic<Library*>, std::size(kPrecisionClasses)> opened{};
  std::atomic<Library*>& slot = opened[static_cast<std::size_t>(precision)];
  if (Library* library = slot.load(std::memory_order_acquire)) return *library;
  static std::mutex mutex;
  std::lock_guard lock(mutex);
  if (Library* library = slot.load(std::memory_order_relaxed)) return *library;
  Library::Options options;
  options.precision = precision;
  auto* library = new Library(options);
  slot.store(library, std::memory_order_release);
  return *library;
}

PrecisionClass precisionFrom(const std::string& name) {
  if (auto p = precisionNamed(name)) return *p;
  throw std::invalid_argument("precision must be \"strict\" or \"faithful\", not \"" + name + "\"");
}

Status launchPlanned(Library& library, CUstream stream, const GemmPlan& p, float alpha, float beta) {
  const auto* A = reinterpret_cast<const float*>(p.A);
  const auto* B = reinterpret_cast<const float*>(p.B);
  auto* C = reinterpret_cast<float*>(p.C);
  if (p.batch == 1)
    return library.sgemm(stream, Order::row_major, p.opA, p.opB, p.M, p.N, p.K, alpha, A, p.lda, B, p.ldb, beta, C,
                         p.ldc);
  return library.sgemmStridedBatched(stream, Order::row_major, p.opA, p.opB, p.M, p.N, p.K, alpha, A, p.lda, p.strideA,
                                     B, p.ldb, p.strideB, beta, C, p.ldc, p.strideC, p.batch);
}

bool makePrimaryContextCurrent(int device) {
  if (!CudaDriver::available()) return false;
  const CudaDriver& d = CudaDriver::get();
  CUdevice handle = 0;
  CUcontext context = nullptr;
  return d.cuDeviceGet(&handle, device) == CUDA_SUCCESS && d.cuDevicePrimaryCtxRetain(&context, handle) == CUDA_SUCCESS &&
         d.cuCtxSetCurrent(context) == CUDA_SUCCESS;
}

}  // namespace gemmtune::python
