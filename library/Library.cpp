// gemmtune::Library: argument checks and the public face; planning lives in Planner, kernels and
// launches in Dispatcher.
#include "gemmtune/Library.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <stdexcept>

#include "DeviceSpecs.hpp"
#include "Dispatcher.hpp"
#include "GemmCall.hpp"
#include "Planner.hpp"
#include "SeenRecorder.hpp"
#include "Warnings.hpp"

namespace gemmtune {

namespace {

thread_local std::string tlsLastError;

void checkSize(long long M, long long N, long long K, long long batch = 1) {
  if (M < 1 || N < 1 || K < 1) throw std::invalid_argument(fmt::format("M, N and K must be at least 1 (got {}x{}x{})", M, N, K));
  if (batch < 1) throw std::invalid_argument(fmt::format("batch must be at least 1 (got {})", batch));
}

GemmShape shapeOf(Op opA, Op opB, long long M, long long N, long long K, long long batch) {
  return GemmShape{M, N, K, library::layoutOf(opA, opB), batch};
}

}  // namespace

const char* toString(Match match) {
  switch (match) {
    case Match::exact: return "exact";
    case Match::nearest_size: return "nearest_size";
    case Match::default_config: return "default";
  }
  return "default";
}

const char* toString(Status status) {
  switch (status) {
    case Status::ok: return "ok";
    case Status::invalid_argument: return "invalid_argument";
    case Status::no_gpu: return "no_gpu";
    case Status::launch_failed: return "launch_failed";
    case Status::declined: return "declined";
    case Status::partial_failure: return "partial_failure";
  }
  return "launch_failed";
}

struct Library::Impl {
  explicit Impl(const std::filesystem::path& dbPath)
      : planner(dbPath, warnings),
        seen(library::seenRecorderFor(dbPath.string(), true, warnings)),
        dispatcher(planner, specs, warnings, seen.get()) {}
  explicit Impl(const Options& options)
      : planner(options.stores, warnings, options.cublas, options.measuredWinsOnly, options.precision),
        seen(library::seenRecorderFor(options.stores.empty() ? std::string() : options.stores.front(),
                                      options.recordSeen, warnings)),
        dispatcher(planner, specs, warnings, seen.get(), options.measuredWinsOnly) {}
  library::Warnings warnings;
  library::DeviceSpecs specs;
  library::Planner planner;
  std::unique_ptr<library::SeenRecorder> seen;  // destroyed after the dispatcher, flushing last
  library::Dispatcher dispatcher;
};

Library::Library(std::filesystem::path dbPath) : impl_(std::make_unique<Impl>(dbPath)) {}
Library::Library(const Options& options) : impl_(std::make_unique<Impl>(options)) {}
Library::~Library() = default;

Choice Library::best(int device, long long M, long long N, long long K) { return best(device, Op::N, Op::N, M, N, K); }

Choice Library::best(const GpuSpec& gpu, long long M, long long N, long long K) { return best(gpu, Op::N, Op::N, M, N, K); }

Choice Library::best(int device, Op opA, Op opB, long long M, long long N, long long K, long long batch) {
  checkSize(M, N, K, batch);
  return impl_->planner.plan(impl_->specs.get(device), shapeOf(opA, opB, M, N, K, batch)).choice;
}

Choice Library::best(const GpuSpec& gpu, Op opA, Op opB, long long M, long long N, long long K, long long batch) {
  checkSize(M, N, K, batch);
  return impl_->planner.plan(gpu, shapeOf(opA, opB, M, N, K, batch)).choice;
}

Status Library::sgemm(CUstream_st* stream, int M, int N, int K, float alpha, const float* A, int lda, const float* B,
                       int ldb, float beta, float* C, int ldc) noexcept {
  return sgemm(stream, Order::row_major, Op::N, Op::N, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

Status Library::sgemm(CUstream_st* stream, Order order, Op opA, Op opB, int M, int N, int K, float alpha,
                       const float* A, int lda, const float* B, int ldb, float beta, float* C, int ldc) noexcept {
  return run(stream, {order, opA, opB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc});
}

Status Library::sgemmStridedBatched(CUstream_st* stream, Order order, Op opA, Op opB, int M, int N, int K, float alpha,
                                    const float* A, int lda, long long strideA, const float* B, int ldb,
                                    long long strideB, float beta, float* C, int ldc, long long strideC,
                                    int batch) noexcept {
  library::GemmCall call{order, opA, opB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, batch};
  call.strideA = strideA, call.strideB = strideB, call.strideC = strideC;
  return run(stream, call);
}

Status Library::sgemmBatched(CUstream_st* stream, Order order, Op opA, Op opB, int M, int N, int K, float alpha,
                             const float* const A[], int lda, const float* const B[], int ldb, float beta,
                             float* const C[], int ldc, int batch) noexcept {
  library::GemmCall call{order, opA, opB, M, N, K, alpha, nullptr, lda, nullptr, ldb, beta, nullptr, ldc, batch};
  call.arrayA = A, call.arrayB = B, call.arrayC = C;
  // Null arrays are the caller's mistake; the call form says arrays were meant.
  if (!A || !B || !C) {
    try {
      tlsLastError = fmt::format("null pointer array for {}", !A ? "A" : !B ? "B" : "C");
    } catch (...) {  // formatting ran out of memory
    }
    return Status::invalid_argument;
  }
  return run(stream, call);
}

Status Library::run(CUstream_st* stream, const library::GemmCall& call) noexcept {
  try {
    if (std::string why = library::invalidArgument(call); !why.empty()) {
      tlsLastError = std::move(why);
      return Status::invalid_argument;
    }
  } catch (...) {  // formatting ran out of memory
    return Status::invalid_argument;
  }
  std::string error;
  Status s = impl_->dispatcher.sgemm(stream, library::asRowMajor(call), error);
  if (s != Status::ok) {
    try {
      tlsLastError = std::move(error);
    } catch (...) {
    }
  }
  return s;
}

std::string Library::lastError() { return tlsLastError; }

}  // namespace gemmtune
