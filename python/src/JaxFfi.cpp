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
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace gemmtune::python {
namespace {

// A JAX buffer is dense and row-major. Its dimensions before the last two (one batch dimension, or
// several under jax.vmap) are flattened into one batch; `outLeading` is out's, which an operand's
// leading dimensions must equal unless they hold one matrix (then it serves every batch).
TensorView viewOf(const char* name, void* data, ffi::Span<const std::int64_t> dims, ffi::Span<const std::int64_t> outLeading) {
  TensorView v;
  v.data = reinterpret_cast<std::uintptr_t>(data);
  const std::size_t rank = dims.size();
  if (rank < 2) throw std::invalid_argument(std::string(name) + " has fewer than 2 dimensions");
  const std::int64_t rows = dims[rank - 2], cols = dims[rank - 1];
  if (rank == 2 && outLeading.size() == 0) {
    v.shape = {rows, cols};
    v.strides = {cols, 1};
    return v;
  }
  std::int64_t batch = 1;
  for (std::size_t i = 0; i + 2 < rank; ++i) batch *= dims[i];
  const bool sameLeading = rank - 2 == outLeading.size() && std::equal(dims.begin(), dims.begin() + (rank - 2), outLeading.begin());
  if (batch != 1 && !sameLeading)
    throw std::invalid_argument(std::string(name) + "'s batch dimensions differ from the result's: broadcast them first");
  v.shape = {batch, rows, cols};
  v.strides = {rows * cols, cols, 1};
  return v;
}

// XLA runs the handler on a thread with the device's context current; a thread without one gets
// the context of the stream it was handed.
void makeStreamContextCurrent(CUstream stream) {
  const CudaDriver& d = CudaDriver::get();
  CUcontext current = nullptr;
  if (d.cuCtxGetCurrent(&current) == CUDA_SUCCESS && current) return;
  CUcontext context = nullptr;
  d.check(d.cuStreamGetCtx(stream, &context), "cuStreamGetCtx on JAX's stream");
  d.check(d.cuCtxSetCurrent(context), "cuCtxSetCurrent to JAX's stream's context");
}

// out = alpha·a·b. K == 0 and alpha == 0 give zeros (like BLAS, a and b are not read then).
ffi::Error matmul(CUstream stream, ffi::Buffer<ffi::F32> a, ffi::Buffer<ffi::F32> b, ffi::ResultBuffer<ffi::F32> out,
                  float alpha, std::string_view precision) {
  try {
    const auto outDims = out->dimensions();
    const auto outLeading = outDims.first(outDims.size() > 2 ? outDims.size() - 2 : 0);
    const TensorView va = viewOf("a", a.untyped_data(), a.dimensions(), outLeading);
    const TensorView vb = viewOf("b", b.untyped_data(), b.dimensions(), outLeading);
    const TensorView vc = viewOf("out", out->untyped_data(), outDims, outLeading);
    const GemmPlan plan = planGemm(va, vb, vc);
    Library& library = libraryFor(precisionFrom(std::string(precision)));
    makeStreamContextCurrent(stream);
    if (!plan.launch && !plan.scaleOnly) return ffi::Error::Success();
    if (plan.scaleOnly || alpha == 0.0f) {
      const CudaDriver& d = CudaDriver::get();
      d.check(d.cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(out->untyped_data()), 0, out->element_count(), stream),
              "zeroing the result");
      return ffi::Error::Success();
    }
    const Status status = launchPlanned(library, stream, plan, alpha, 0.0f);
    if (status == Status::ok) return ffi::Error::Success();
    const std::string why = std::string("gemmtune: ") + toString(status) + ": " + Library::lastError();
    return status == Status::invalid_argument ? ffi::Error::InvalidArgument(why) : ffi::Error::Internal(why);
  } catch (const std::invalid_argument& e) {
    return ffi::Error::InvalidArgument(std::string("gemmtune: ") + e.what());
  } catch (const std::exception& e) {
    return ffi::Error::Internal(std::string("gemmtune: ") + e.what());
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
