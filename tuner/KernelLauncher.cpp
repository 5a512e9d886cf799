#include "KernelLauncher.hpp"

#include "CudaDriver.hpp"

namespace gemmtune {

LoadedKernel::LoadedKernel(const std::string& cubin, const std::string& loweredName, int dynamicSmemBytes,
                           const CudaDriver& driver)
    : driver_(driver), dynamicSmemBytes_(dynamicSmemBytes) {
  const CudaDriver& d = driver_;
  d.check(d.cuModuleLoadData(&module_, cubin.data()), "cuModuleLoadData");
  try {
    d.check(d.cuModuleGetFunction(&function_, module_, loweredName.c_str()), "cuModuleGetFunction");
    // The default is 48 KiB minus the static shared memory; anything above needs the opt-in,
    // up to the device's opt-in maximum (the filters reject beyond it).
    if (dynamicSmemBytes > attribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES))
      d.check(d.cuFuncSetAttribute(function_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, dynamicSmemBytes),
              "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
  } catch (...) {
    d.cuModuleUnload(module_);
    throw;
  }
}

LoadedKernel::~LoadedKernel() {
  if (module_) driver_.cuModuleUnload(module_);
}

int LoadedKernel::attribute(CUfunction_attribute which) const {
  const CudaDriver& d = driver_;
  int v = 0;
  d.check(d.cuFuncGetAttribute(&v, which, function_), "cuFuncGetAttribute");
  return v;
}

int LoadedKernel::driverBlocksPerSm(int threadsPerBlock) const {
  const CudaDriver& d = driver_;
  int blocks = 0;
  d.check(d.cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, function_, threadsPerBlock,
                                                        static_cast<size_t>(dynamicSmemBytes_)),
          "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  return blocks;
}

CUresult LoadedKernel::launch(Dim3 grid, int threadsPerBlock, void** params, CUstream stream) const {
  return driver_.cuLaunchKernel(function_, grid.x, grid.y, grid.z, static_cast<unsigned>(threadsPerBlock), 1, 1,
                                          static_cast<unsigned>(dynamicSmemBytes_), stream, params, nullptr);
}

CUresult LoadedKernel::launchSgemm(const Config& config, const SgemmArgs& args, CUstream stream) const {
  SgemmArgs a = args;  // cuLaunchKernel takes pointers to each argument
  void* params[] = {&a.m, &a.n, &a.k, &a.alpha, &a.a, &a.lda, &a.b, &a.ldb, &a.beta, &a.c, &a.ldc};
  const Family& f = *config.family;
  return launch(f.grid(config, a.m, a.n), f.threadsPerBlock(config), params, stream);
}

}  // namespace gemmtune
