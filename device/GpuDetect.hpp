// GpuDetect: GpuSpec from the CUDA driver (loaded at run time) or from an offline profile, chosen
// by the --gpu selector every command shares.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gemmtune/GpuSpec.hpp"

namespace gemmtune {

// Visible CUDA devices; throws NoGpuError when there is no driver or no GPU.
int cudaDeviceCount();
// The limits of device `ordinal` as the driver reports them; throws NoGpuError / UsageError.
GpuSpec queryGpu(int ordinal);
// The ordinal of the calling thread's current context's device (a CUdevice is a handle; the
// ordinal is what queryGpu and users speak). Throws NoGpuError without a driver, CudaError without
// a current context.
int currentContextOrdinal();
// Every visible GPU; empty (never throws) without a driver.
std::vector<GpuSpec> detectGpus();

// --gpu selector: "auto" (the current GPU: ordinal 0 of CUDA_VISIBLE_DEVICES), "N" (ordinal),
// "all" (every visible GPU) or an offline profile key ("h100"). Unknown names and indices out of
// range throw UsageError listing the valid choices; auto/N/all without a GPU throw NoGpuError.
std::vector<GpuSpec> resolveGpus(std::string_view selector);
// As resolveGpus, but exactly one GPU ("all" is refused with a UsageError).
GpuSpec resolveGpu(std::string_view selector);

// The detected GPU's sm_XY, else "sm_90": the compile target when none is given.
std::string defaultArch();

}  // namespace gemmtune
