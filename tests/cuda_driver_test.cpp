// CudaDriver: each entry point is resolved at the ABI whose signature cuda.h declares, and a
// missing driver is a clean NoGpuError.
#include <gtest/gtest.h>

#include <type_traits>

#include "CudaDriver.hpp"
#include "ExitCodes.hpp"

using namespace gemmtune;

// cuGetProcAddress hands back the ABI version asked for; calling it through a pointer of another
// signature corrupts arguments (CUDA 13's cuCtxSynchronize_v13000 takes a context: calling it
// without one failed every launch check with CUDA_ERROR_CONTEXT_IS_DESTROYED).
#define GEMMTUNE_SAME_AS_HEADER(name, abi)                                          \
  static_assert(std::is_same_v<decltype(CudaDriver::name), decltype(&::name)>,     \
                #name " is resolved at an ABI whose signature differs from cuda.h");
GEMMTUNE_CUDA_DRIVER_FUNCTIONS(GEMMTUNE_SAME_AS_HEADER)
#undef GEMMTUNE_SAME_AS_HEADER

TEST(CudaDriver, CtxSynchronizeIsTheArgumentlessAbi) {
  EXPECT_TRUE((std::is_same_v<decltype(CudaDriver::cuCtxSynchronize), CUresult (*)()>));
}

TEST(CudaDriver, WithoutADriverEveryUseIsNoGpuError) {
  if (CudaDriver::available()) GTEST_SKIP() << "a CUDA driver is present";
  try {
    CudaDriver::get();
    FAIL();
  } catch (const NoGpuError& e) {
    EXPECT_EQ(exitCodeOf(e), kExitUnavailable);
    EXPECT_NE(std::string(e.what()).find("libcuda.so.1"), std::string::npos) << e.what();
  }
}
