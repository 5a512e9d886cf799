#include "LibraryColumn.hpp"

#include <stdexcept>

#if GEMMTUNE_BENCH_HAS_LIBRARY
#include "gemmtune/Library.hpp"
#endif

namespace gemmtune::bench {

#if GEMMTUNE_BENCH_HAS_LIBRARY

struct LibraryColumn::Impl {
  Impl(const std::filesystem::path& db, bool cublas) : lib(options(db, cublas)) {}
  static Library::Options options(const std::filesystem::path& db, bool cublas) {
    Library::Options o;
    o.stores = {db.string()};
    o.cublas = cublas;
    o.recordSeen = cublas;  // one column records the workload's shapes: two would double their time
    return o;
  }
  Library lib;
};

bool LibraryColumn::built() { return true; }

LibraryColumn::LibraryColumn(const std::filesystem::path& dbPath, bool cublas)
    : impl_(std::make_unique<Impl>(dbPath, cublas)) {}

LibraryColumn::Pick LibraryColumn::best(int device, const GemmShape& s) {
  auto op = [](bool t) { return t ? Op::T : Op::N; };
  Choice c = impl_->lib.best(device, op(s.layout.transA), op(s.layout.transB), s.M, s.N, s.K, s.batch);
  return {c.instance, toString(c.match)};
}

void LibraryColumn::sgemm(CUstream stream, const SgemmArgs& a) {
  const Op opA = a.layout.transA ? Op::T : Op::N, opB = a.layout.transB ? Op::T : Op::N;
  auto* A = reinterpret_cast<const float*>(a.a);
  auto* B = reinterpret_cast<const float*>(a.b);
  auto* C = reinterpret_cast<float*>(a.c);
  // The bench's batches are strided (ProblemData's timing set).
  Status st = a.batch.count > 1
                  ? impl_->lib.sgemmStridedBatched(stream, Order::row_major, opA, opB, a.m, a.n, a.k, a.alpha, A, a.lda,
                                                   a.batch.strideA, B, a.ldb, a.batch.strideB, a.beta, C, a.ldc,
                                                   a.batch.strideC, a.batch.count)
                  : impl_->lib.sgemm(stream, Order::row_major, opA, opB, a.m, a.n, a.k, a.alpha, A, a.lda, B, a.ldb,
                                     a.beta, C, a.ldc);
  if (st != Status::ok) throw std::runtime_error(std::string("sgemm(): ") + toString(st) + ": " + Library::lastError());
}

#else

struct LibraryColumn::Impl {};

bool LibraryColumn::built() { return false; }

LibraryColumn::LibraryColumn(const std::filesystem::path&, bool) {
  throw std::runtime_error("gemm_bench was built without gemmtune::Library");
}

LibraryColumn::Pick LibraryColumn::best(int, const GemmShape&) { return {}; }

void LibraryColumn::sgemm(CUstream, const SgemmArgs&) {}

#endif

LibraryColumn::~LibraryColumn() = default;

}  // namespace gemmtune::bench
