#include "CudaDriver.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <memory>
#include <mutex>

#include "gemmtune/Errors.hpp"

namespace gemmtune {

namespace {
using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);

std::unique_ptr<CudaDriver>& instance();
std::string& loadError() {
  static std::string e;
  return e;
}
}  // namespace

CudaDriver::CudaDriver() {
  void* lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) throw NoGpuError("no CUDA driver: libcuda.so.1 not found (this command needs an NVIDIA GPU)");
  auto getProc = reinterpret_cast<GetProcAddress>(::dlsym(lib, "cuGetProcAddress_v2"));
  if (!getProc) throw NoGpuError("CUDA driver too old: cuGetProcAddress_v2 missing (need driver for CUDA 12+)");
#define GEMMTUNE_RESOLVE(name, abi)                                                                      \
  {                                                                                                   \
    void* fn = nullptr;                                                                               \
    CUdriverProcAddressQueryResult status{};                                                          \
    if (getProc(#name, &fn, abi, CU_GET_PROC_ADDRESS_DEFAULT, &status) != CUDA_SUCCESS || !fn)          \
      throw NoGpuError(fmt::format("CUDA driver lacks {} (ABI {}): update the NVIDIA driver", #name,  \
                                   abi));                                                             \
    name = reinterpret_cast<decltype(name)>(fn);                                                      \
  }
  GEMMTUNE_CUDA_DRIVER_FUNCTIONS(GEMMTUNE_RESOLVE)
#undef GEMMTUNE_RESOLVE
  // The handle stays open for the life of the process: the pointers above point into it.
  if (CUresult r = cuInit(0); r != CUDA_SUCCESS)
    throw NoGpuError(fmt::format("no usable CUDA GPU: cuInit failed: {}", describe(r)));
  cuDriverGetVersion(&version_);
}

namespace {
std::unique_ptr<CudaDriver>& instance() {
  static std::unique_ptr<CudaDriver> d;
  return d;
}
}  // namespace

const CudaDriver& CudaDriver::get() {
  static std::once_flag once;
  std::call_once(once, [] {
    try {
      instance().reset(new CudaDriver());
    } catch (const std::exception& e) {
      loadError() = e.what();
    }
  });
  if (!instance()) throw NoGpuError(loadError());
  return *instance();
}

bool CudaDriver::available() {
  try {
    get();
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

std::string CudaDriver::describe(CUresult r) const {
  const char* name = nullptr;
  const char* text = nullptr;
  cuGetErrorName(r, &name);
  cuGetErrorString(r, &text);
  return fmt::format("{}: {}", name ? name : fmt::format("CUresult {}", static_cast<int>(r)), text ? text : "unknown error");
}

void CudaDriver::check(CUresult r, const char* what) const {
  if (r != CUDA_SUCCESS) throw CudaError(r, fmt::format("{}: {}", what, describe(r)));
}

}  // namespace gemmtune
