#include "LibraryColumn.hpp"

#include <stdexcept>

#include "FamilyRegistry.hpp"

#if GEMMTUNE_BENCH_HAS_LIBRARY
#include "gemmtune/Library.hpp"
#endif

namespace gemmtune::bench {

#if GEMMTUNE_BENCH_HAS_LIBRARY

struct LibraryColumn::Impl {
  Impl(const std::filesystem::path& db, bool cublas, PrecisionClass precision) : lib(options(db, cublas, precision)) {}
  static Library::Options options(const std::filesystem::path& db, bool cublas, PrecisionClass precision) {
    Library::Options o;
    o.stores = {db.string()};
    o.cublas = cublas;
    o.precision = precision;
    o.recordSeen = cublas;  // one column records the workload's shapes: two would double their time
    return o;
  }
  Library lib;
};

bool LibraryColumn::built() { return true; }

LibraryColumn::LibraryColumn(const std::filesystem::path& dbPath, bool cublas, PrecisionClass precision)
    : impl_(std::make_unique<Impl>(dbPath, cublas, precision)) {}

LibraryColumn::Pick LibraryColumn::best(int device, const GemmShape& s) {
  auto op = [](bool t) { return t ? Op::T : Op::N; };
  Choice c = impl_->lib.best(device, op(s.layout.transA), op(s.layout.transB), s.M, s.N, s.K, s.batch);
  // Canonical names start with the family ("tf32x3_..."); cuBLAS's ("cublas_nn") names none.
  const Family* family = FamilyRegistry::builtin().find(c.instance.substr(0, c.instance.find('_')));
  return {c.instance, toString(c.match), family ? family->precision : PrecisionClass::strict};
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

LibraryColumn::LibraryColumn(const std::filesystem::path&, bool, PrecisionClass) {
  throw std::runtime_error("gemm_bench was built without gemmtune::Library");
}

LibraryColumn::Pick LibraryColumn::best(int, const GemmShape&) { return {}; }

void LibraryColumn::sgemm(CUstream, const SgemmArgs&) {}

#endif

LibraryColumn::~LibraryColumn() = default;

}  // namespace gemmtune::bench
