#include "LibraryColumn.hpp"

#include <stdexcept>

#if GEMMTUNE_BENCH_HAS_LIBRARY
#include "gemmtune/Library.hpp"
#endif

namespace gemmtune::bench {

#if GEMMTUNE_BENCH_HAS_LIBRARY

struct LibraryColumn::Impl {
  explicit Impl(const std::filesystem::path& db) : lib(db) {}
  Library lib;
};

bool LibraryColumn::built() { return true; }

LibraryColumn::LibraryColumn(const std::filesystem::path& dbPath) : impl_(std::make_unique<Impl>(dbPath)) {}

LibraryColumn::Pick LibraryColumn::best(int device, const GemmShape& s) {
  Choice c = impl_->lib.best(device, s.M, s.N, s.K);
  return {c.instance, toString(c.match)};
}

void LibraryColumn::sgemm(CUstream stream, const SgemmArgs& a) {
  Status st = impl_->lib.sgemm(stream, a.m, a.n, a.k, a.alpha, reinterpret_cast<const float*>(a.a), a.lda,
                               reinterpret_cast<const float*>(a.b), a.ldb, a.beta, reinterpret_cast<float*>(a.c), a.ldc);
  if (st != Status::ok) throw std::runtime_error(std::string("sgemm(): ") + toString(st) + ": " + Library::lastError());
}

#else

struct LibraryColumn::Impl {};

bool LibraryColumn::built() { return false; }

LibraryColumn::LibraryColumn(const std::filesystem::path&) {
  throw std::runtime_error("gemm_bench was built without gemmtune::Library");
}

LibraryColumn::Pick LibraryColumn::best(int, const GemmShape&) { return {}; }

void LibraryColumn::sgemm(CUstream, const SgemmArgs&) {}

#endif

LibraryColumn::~LibraryColumn() = default;

}  // namespace gemmtune::bench
