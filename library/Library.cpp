// gemmtune::Library: argument checks and the public face; planning lives in Planner, kernels and
// launches in Dispatcher.
#include "gemmtune/Library.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <stdexcept>

#include "DeviceSpecs.hpp"
#include "Dispatcher.hpp"
#include "Planner.hpp"
#include "Warnings.hpp"

namespace gemmtune {

namespace {

thread_local std::string tlsLastError;

bool aligned(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % alignof(float) == 0; }

// Why the arguments cannot describe a row-major SGEMM; empty when they can.
std::string invalidArgument(int M, int N, int K, const float* A, int lda, const float* B, int ldb, const float* C,
                            int ldc) {
  if (M < 1 || N < 1 || K < 1) return fmt::format("M, N and K must be at least 1 (got {}x{}x{})", M, N, K);
  if (lda < K) return fmt::format("lda = {} is less than K = {} (A is M x K, row-major)", lda, K);
  if (ldb < N) return fmt::format("ldb = {} is less than N = {} (B is K x N, row-major)", ldb, N);
  if (ldc < N) return fmt::format("ldc = {} is less than N = {} (C is M x N, row-major)", ldc, N);
  if (!A || !B || !C) return fmt::format("null pointer for {}", !A ? "A" : !B ? "B" : "C");
  if (!aligned(A) || !aligned(B) || !aligned(C))
    return fmt::format("{} is not aligned to 4 bytes", !aligned(A) ? "A" : !aligned(B) ? "B" : "C");
  return {};
}

void checkSize(long long M, long long N, long long K) {
  if (M < 1 || N < 1 || K < 1) throw std::invalid_argument(fmt::format("M, N and K must be at least 1 (got {}x{}x{})", M, N, K));
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
  }
  return "launch_failed";
}

struct Library::Impl {
  explicit Impl(const std::filesystem::path& dbPath) : planner(dbPath, warnings), dispatcher(planner, specs, warnings) {}
  explicit Impl(const std::vector<std::string>& stores)
      : planner(stores, warnings), dispatcher(planner, specs, warnings) {}
  library::Warnings warnings;
  library::DeviceSpecs specs;
  library::Planner planner;
  library::Dispatcher dispatcher;
};

Library::Library(std::filesystem::path dbPath) : impl_(std::make_unique<Impl>(dbPath)) {}
Library::Library(const Options& options) : impl_(std::make_unique<Impl>(options.stores)) {}
Library::~Library() = default;

Choice Library::best(int device, long long M, long long N, long long K) {
  checkSize(M, N, K);
  return impl_->planner.plan(impl_->specs.get(device), M, N, K).choice;
}

Choice Library::best(const GpuSpec& gpu, long long M, long long N, long long K) {
  checkSize(M, N, K);
  return impl_->planner.plan(gpu, M, N, K).choice;
}

Status Library::sgemm(CUstream_st* stream, int M, int N, int K, float alpha, const float* A, int lda, const float* B,
                       int ldb, float beta, float* C, int ldc) noexcept {
  try {
    if (std::string why = invalidArgument(M, N, K, A, lda, B, ldb, C, ldc); !why.empty()) {
      tlsLastError = std::move(why);
      return Status::invalid_argument;
    }
  } catch (...) {  // formatting ran out of memory
    return Status::invalid_argument;
  }
  std::string error;
  Status s = impl_->dispatcher.sgemm(stream, {M, N, K, alpha, A, lda, B, ldb, beta, C, ldc}, error);
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
