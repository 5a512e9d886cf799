#include "DropinServe.hpp"

#include <fmt/format.h>

#include "DropinState.hpp"
#include "GemmCall.hpp"
#include "RealCublas.hpp"

namespace gemmtune::dropin {

namespace {

// The library's view of `call` (column-major; scalars left at their defaults), or false when
// cuBLAS must judge it: an op other than N, T or C, a dimension or batch below 1.
bool describe(const CublasCall& call, library::GemmCall& out) {
  bool ta = false, tb = false;
  if (!realOp(call.transa, ta) || !realOp(call.transb, tb)) return false;
  if (call.m < 1 || call.n < 1 || call.k < 1 || call.batch < 1) return false;
  out.order = Order::column_major;
  out.opA = ta ? Op::T : Op::N;
  out.opB = tb ? Op::T : Op::N;
  out.m = call.m, out.n = call.n, out.k = call.k;
  out.a = static_cast<const float*>(call.a), out.lda = call.lda;
  out.b = static_cast<const float*>(call.b), out.ldb = call.ldb;
  out.c = static_cast<float*>(call.c), out.ldc = call.ldc;
  out.batch = call.batch;
  out.strideA = call.strideA, out.strideB = call.strideB, out.strideC = call.strideC;
  return true;
}

GemmShape rowMajorShape(const library::GemmCall& call) {
  const library::GemmCall r = library::asRowMajor(call);
  return GemmShape{r.m, r.n, r.k, r.layout(), r.batch};
}

// Why the handle's settings or the call's types ask for something else than plain FP32; empty: none.
std::string refusal(cublasHandle_t handle, const CublasCall& call, const RealCublas& real) {
  cublasPointerMode_t pointerMode = CUBLAS_POINTER_MODE_HOST;
  cublasMath_t mathMode = CUBLAS_DEFAULT_MATH;
  if (real.getPointerMode(handle, &pointerMode) != CUBLAS_STATUS_SUCCESS ||
      real.getMathMode(handle, &mathMode) != CUBLAS_STATUS_SUCCESS)
    return "the handle's modes cannot be read";
  return call.ex ? exRefusal(call.aType, call.bType, call.cType, call.compute, pointerMode, mathMode)
                 : handleRefusal(pointerMode, mathMode);
}

Status run(Library& lib, cudaStream_t stream, const library::GemmCall& c, const CublasCall& call) {
  switch (call.form) {
    case CublasCall::Form::single:
      return lib.sgemm(stream, c.order, c.opA, c.opB, c.m, c.n, c.k, c.alpha, c.a, c.lda, c.b, c.ldb, c.beta, c.c,
                       c.ldc);
    case CublasCall::Form::strided:
      return lib.sgemmStridedBatched(stream, c.order, c.opA, c.opB, c.m, c.n, c.k, c.alpha, c.a, c.lda, c.strideA, c.b,
                                     c.ldb, c.strideB, c.beta, c.c, c.ldc, c.strideC, c.batch);
    case CublasCall::Form::arrays:
      return lib.sgemmBatched(stream, c.order, c.opA, c.opB, c.m, c.n, c.k, c.alpha,
                              reinterpret_cast<const float* const*>(call.arrayA), c.lda,
                              reinterpret_cast<const float* const*>(call.arrayB), c.ldb, c.beta,
                              reinterpret_cast<float* const*>(call.arrayC), c.ldc, c.batch);
  }
  return Status::declined;
}

}  // namespace

bool serve(cublasHandle_t handle, const CublasCall& call) noexcept {
  try {
    library::GemmCall c;
    if (!handle || !describe(call, c)) return false;
    const bool fp32 = !call.ex || (call.aType == CUDA_R_32F && call.bType == CUDA_R_32F && call.cType == CUDA_R_32F);
    if (!fp32) return false;  // not ours to count or record
    DropinState& s = state();
    s.counts.calls.fetch_add(1, std::memory_order_relaxed);
    if (CallRecorder* r = s.recorder()) r->count(rowMajorShape(c));
    Library* lib = s.library();
    if (!lib) return false;  // policy off, or the library could not start (warned)
    const RealCublas& real = realCublas();
    if (!real.complete()) return false;  // the forward says why
    if (!refusal(handle, call, real).empty() || !call.alpha || !call.beta) {
      s.counts.notPlainFp32.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    c.alpha = *static_cast<const float*>(call.alpha);
    c.beta = *static_cast<const float*>(call.beta);
    cudaStream_t stream = nullptr;
    if (real.getStream(handle, &stream) != CUBLAS_STATUS_SUCCESS) return false;
    const Status status = run(*lib, stream, c, call);
    if (status == Status::ok) {
      s.counts.served.fetch_add(1, std::memory_order_relaxed);
      return true;
    }
    if (status == Status::declined) {
      s.counts.declined.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    s.counts.failed.fetch_add(1, std::memory_order_relaxed);
    // An invalid argument is cuBLAS's to report (it gets the call); anything else is said once.
    if (status != Status::invalid_argument)
      s.warnings().once(std::string("status|") + toString(status),
                        fmt::format("gemmtune drop-in: {} ({}); such calls go to cuBLAS", Library::lastError(),
                                    toString(status)));
    return false;
  } catch (...) {  // out of memory while describing: cuBLAS computes it
    return false;
  }
}

}  // namespace gemmtune::dropin
