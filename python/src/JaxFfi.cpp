#include "JaxFfi.hpp"

#ifdef GEMMTUNE_XLA_FFI
#include <cstdint>
#include <exception>
#include <algorithm>
#include <stdexcept>
#include <string>
#include <string_view>

#include "CudaDriver.hpp"
#include "LibraryCalls.hpp"
#include "StackedBatches.hpp"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace gemmtune::python {
namespace {

Dims dimsOf(ffi::Span<const std::int64_t> span) {
  Dims d;
  d.count = static_cast<int>(span.size());
  for (std::size_t i = 0; i < span.size() && i < Dims::kMaxDims; ++i) d.values[i] = span[i];
  return d;
}

std::uintptr_t address(void* p) { return reinterpret_cast<std::uintptr_t>(p); }

// XLA runs the handler with the device's context current; should a thread have none, or another
// device's, the context of the stream it was handed is made current.
void makeStreamContextCurrent(CUstream stream) {
  const CudaDriver& d = CudaDriver::get();
  CUcontext current = nullptr, context = nullptr;
  d.check(d.cuStreamGetCtx(stream, &context), "cuStreamGetCtx on JAX's stream");
  if (d.cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == context) return;
  d.check(d.cuCtxSetCurrent(context), "cuCtxSetCurrent to JAX's stream's context");
}

// out = alpha·a·b. K == 0 and alpha == 0 give zeros (like BLAS, a and b are not read then).
ffi::Error matmul(CUstream stream, ffi::Buffer<ffi::F32> a, ffi::Buffer<ffi::F32> b, ffi::ResultBuffer<ffi::F32> out,
                  float alpha, std::string_view precision) {
  try {
    const StackedCall call = stackBatches(dimsOf(a.dimensions()), dimsOf(b.dimensions()), dimsOf(out->dimensions()),
                                          address(a.untyped_data()), address(b.untyped_data()),
                                          address(out->untyped_data()));
    GemmPlan plan = planGemm(call.a, call.b, call.out);
    Library& library = libraryFor(precisionFrom(std::string(precision)));
    makeStreamContextCurrent(stream);
    if (!plan.launch && !plan.scaleOnly) return ffi::Error::Success();
    if (plan.scaleOnly || alpha == 0.0f) {
      const CudaDriver& d = CudaDriver::get();
      d.check(d.cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(out->untyped_data()), 0, out->element_count(), stream),
              "zeroing the result");
      return ffi::Error::Success();
    }
    for (std::int64_t i = 0; i < call.calls; ++i) {
      const Status status = launchPlanned(library, stream, plan, alpha, 0.0f);
      if (status != Status::ok) {
        const std::string why = std::string("gemmtune: ") + toString(status) + ": " + Library::lastError();
        return status == Status::invalid_argument ? ffi::Error::InvalidArgument(why) : ffi::Error::Internal(why);
      }
      plan.A += call.strideA * sizeof(float), plan.B += call.strideB * sizeof(float), plan.C += call.strideOut * sizeof(float);
    }
    return ffi::Error::Success();
  } catch (const std::invalid_argument& e) {
    return ffi::Error::InvalidArgument(std::string("gemmtune: ") + e.what());
  } catch (const std::exception& e) {
    return ffi::Error::Internal(std::string("gemmtune: ") + e.what());
  } catch (...) {  // nothing may cross XLA's C interface
    return ffi::Error::Internal("gemmtune: an unknown exception");
  }
}

XLA_FFI_DEFINE_HANDLER(kMatmulHandler, matmul,
                       ffi::Ffi::Bind()
                           .Ctx<ffi::PlatformStream<CUstream>>()
                           .Arg<ffi::Buffer<ffi::F32>>()
                           .Arg<ffi::Buffer<ffi::F32>>()
                           .Ret<ffi::Buffer<ffi::F32>>()
                           .Attr<float>("alpha")
                           .Attr<std::string_view>("precision"));

}  // namespace

void* jaxMatmulHandler() { return reinterpret_cast<void*>(kMatmulHandler); }

}  // namespace gemmtune::python

#else

void* gemmtune::python::jaxMatmulHandler() { return nullptr; }

#endif
