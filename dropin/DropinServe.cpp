#include "DropinServe.hpp"

#include <fmt/format.h>

#include "DropinState.hpp"
#include "GemmCall.hpp"
#include "RealCublas.hpp"

namespace gemmtune::dropin {

namespace {

// The library's view of `call` (column-major; scalars left at their defaults), or false when
// cuBLAS must judge it: an op other than N, T or C, a dimension or batch below 1, leading
// dimensions, strides or pointers the library refuses (library/GemmCall's invalidArgument).
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
  if (call.form == CublasCall::Form::arrays) {
    out.arrayA = reinterpret_cast<const float* const*>(call.arrayA);
    out.arrayB = reinterpret_cast<const float* const*>(call.arrayB);
    out.arrayC = reinterpret_cast<float* const*>(call.arrayC);
    if (!out.arrayA || !out.arrayB || !out.arrayC) return false;
  }
  return library::invalidArgument(out).empty();
}

GemmShape rowMajorShape(const library::GemmCall& call) {
  const library::GemmCall r = library::asRowMajor(call);
  return GemmShape{r.m, r.n, r.k, r.layout(), r.batch};
}

// Why the handle's settings or the call's types ask for something else than plain FP32; empty: none.
std::string refusal(cublasHandle_t handle, const CublasCall& call, const RealCublas& real, PrecisionClass served) {
  cublasPointerMode_t pointerMode = CUBLAS_POINTER_MODE_HOST;
  cublasMath_t mathMode = CUBLAS_DEFAULT_MATH;
  if (real.getPointerMode(handle, &pointerMode) != CUBLAS_STATUS_SUCCESS ||
      real.getMathMode(handle, &mathMode) != CUBLAS_STATUS_SUCCESS)
    return "the handle's modes cannot be read";
  std::string why = call.ex ? exRefusal(call.aType, call.bType, call.cType, call.compute, call.algo, pointerMode, mathMode)
                            : handleRefusal(pointerMode, mathMode);
  if (why.empty()) why = pedanticRefusal(served, mathMode, call.ex && call.compute == CUBLAS_COMPUTE_32F_PEDANTIC);
  return why;
}

Status run(Library& lib, cudaStream_t stream, const library::GemmCall& c, CublasCall::Form form) {
  switch (form) {
    case CublasCall::Form::single:
      return lib.sgemm(stream, c.order, c.opA, c.opB, c.m, c.n, c.k, c.alpha, c.a, c.lda, c.b, c.ldb, c.beta, c.c,
                       c.ldc);
    case CublasCall::Form::strided:
      return lib.sgemmStridedBatched(stream, c.order, c.opA, c.opB, c.m, c.n, c.k, c.alpha, c.a, c.lda, c.strideA, c.b,
                                     c.ldb, c.strideB, c.beta, c.c, c.ldc, c.strideC, static_cast<int>(c.batch));
    case CublasCall::Form::arrays:
      return lib.sgemmBatched(stream, c.order, c.opA, c.opB, c.m, c.n, c.k, c.alpha, c.arrayA, c.lda, c.arrayB, c.ldb,
                              c.beta, c.arrayC, c.ldc, static_cast<int>(c.batch));
  }
  return Status::declined;
}

// What a status other than ok and declined means for the call: forwarded (nothing ran), or failed
// when a later launch of several failed (forwarding would apply beta twice to earlier batches).
std::optional<cublasStatus_t> afterFailure(DropinState& s, Status status) {
  s.counts.failed.fetch_add(1, std::memory_order_relaxed);
  const bool partial = status == Status::partial_failure;
  // An invalid argument is cuBLAS's to report (it gets the call); anything else is said once.
  if (status != Status::invalid_argument)
    s.warnings().once(std::string("status|") + toString(status) + (partial ? "|partial" : ""),
                      fmt::format("gemmtune drop-in: {} ({}); {}", Library::lastError(), toString(status),
                                  partial ? "the call returns CUBLAS_STATUS_EXECUTION_FAILED (some of its batches "
                                            "may have been written)"
                                          : "such calls go to cuBLAS"));
  if (partial) return CUBLAS_STATUS_EXECUTION_FAILED;
  return std::nullopt;
}

}  // namespace

std::optional<cublasStatus_t> serve(cublasHandle_t handle, const CublasCall& call) noexcept {
  try {
    library::GemmCall c;
    const bool fp32 = !call.ex || (call.aType == CUDA_R_32F && call.bType == CUDA_R_32F && call.cType == CUDA_R_32F);
    if (!handle || !fp32 || !describe(call, c)) return std::nullopt;  // not ours to count or record
    DropinState& s = state();
    s.counts.calls.fetch_add(1, std::memory_order_relaxed);
    if (CallRecorder* r = s.recorder()) r->count(rowMajorShape(c));
    Library* lib = s.library();
    if (!lib) return std::nullopt;  // policy off, or the library could not start (warned)
    const RealCublas& real = realCublas();
    if (!real.complete()) return std::nullopt;  // the forward says why
    // Host scalars are read only once the pointer mode says they are on the host.
    if (!refusal(handle, call, real, s.precision()).empty() || !call.alpha || !call.beta ||
        !scalarRefusal(*static_cast<const float*>(call.alpha)).empty()) {
      s.counts.leftToCublas.fetch_add(1, std::memory_order_relaxed);
      return std::nullopt;
    }
    c.alpha = *static_cast<const float*>(call.alpha);
    c.beta = *static_cast<const float*>(call.beta);
    cudaStream_t stream = nullptr;
    if (real.getStream(handle, &stream) != CUBLAS_STATUS_SUCCESS) return std::nullopt;
    const Status status = run(*lib, stream, c, call.form);
    if (status == Status::ok) {
      s.counts.served.fetch_add(1, std::memory_order_relaxed);
      return CUBLAS_STATUS_SUCCESS;
    }
    if (status == Status::declined) {
      s.counts.declined.fetch_add(1, std::memory_order_relaxed);
      return std::nullopt;
    }
    return afterFailure(s, status);
  } catch (...) {  // out of memory while describing: cuBLAS computes it
    return std::nullopt;
  }
}

}  // namespace gemmtune::dropin
