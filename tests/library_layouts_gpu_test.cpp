// Library::sgemm/sgemmStridedBatched/sgemmBatched on a real GPU (label gpu; skipped without a
// driver): every order (row-, column-major), op(A)/op(B), batch form (one matrix, strided with gaps,
// pointer arrays in reverse order) on odd shapes and leading dimensions, alpha/beta, against a
// host reference on small integers (exact in FP32); C's padding and the gaps between batches'
// C must keep their canaries. Also a batch count past one launch (2048 per launch). The same cases
// through cuBLAS, where a database's cuBLAS rows are the fastest (cuBLAS as a candidate).
// Run: ctest -L gpu -R libraryLayoutsGpu --output-on-failure
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

#include "CudaDriver.hpp"
#include "DeviceBuffer.hpp"
#include "GpuDetect.hpp"
#include "cublas_test_support.hpp"
#include "PrimaryContext.hpp"
#include "gemmtune/Library.hpp"
#include "library_test_support.hpp"

using namespace gemmtune;

namespace {

const CudaDriver& drv() { return CudaDriver::get(); }
constexpr float kCanary = 4242.0f;

// One stored matrix: R x C logical, in `order` with leading dimension ld.
struct Stored {
  Order order;
  int rows, cols, ld;
  long long span() const { return order == Order::row_major ? (rows - 1LL) * ld + cols : (cols - 1LL) * ld + rows; }
  long long at(int r, int c) const { return order == Order::row_major ? r * 1LL * ld + c : r + c * 1LL * ld; }
};

struct Case {
  Order order;
  Op opA, opB;
  int m, n, k, batch;
  float alpha, beta;
  int padA, padB, padC;
  bool arrays;
  std::string text() const {
    return fmt::format("{} {}{} {}x{}x{} batch {}{} alpha {} beta {} pads {},{},{}",
                       order == Order::row_major ? "row" : "col", opA == Op::T ? 't' : 'n', opB == Op::T ? 't' : 'n', m,
                       n, k, batch, arrays ? " (arrays)" : "", alpha, beta, padA, padB, padC);
  }
};

struct Operands {
  Stored a, b, c;
  long long strideA, strideB, strideC;  // floats between batches (gaps included)
};

Operands operandsOf(const Case& t) {
  const bool row = t.order == Order::row_major;
  auto stored = [&](int r, int c, int pad) { return Stored{t.order, r, c, (row ? c : r) + pad}; };
  Operands o{stored(t.opA == Op::N ? t.m : t.k, t.opA == Op::N ? t.k : t.m, t.padA),
             stored(t.opB == Op::N ? t.k : t.n, t.opB == Op::N ? t.n : t.k, t.padB), stored(t.m, t.n, t.padC), 0, 0, 0};
  o.strideA = o.a.span() + 5, o.strideB = o.b.span() + 3, o.strideC = o.c.span() + 7;
  return o;
}

std::vector<float> hostReference(const Case& t, const Operands& o, const std::vector<float>& A,
                                 const std::vector<float>& B, const std::vector<float>& C0) {
  std::vector<float> C = C0;
  for (int b = 0; b < t.batch; ++b)
    for (int i = 0; i < t.m; ++i)
      for (int j = 0; j < t.n; ++j) {
        double acc = 0;
        for (int p = 0; p < t.k; ++p) {
          const double a = A[b * o.strideA + (t.opA == Op::N ? o.a.at(i, p) : o.a.at(p, i))];
          const double bv = B[b * o.strideB + (t.opB == Op::N ? o.b.at(p, j) : o.b.at(j, p))];
          acc += a * bv;
        }
        float& c = C[b * o.strideC + o.c.at(i, j)];
        c = static_cast<float>(t.alpha * acc + (t.beta == 0 ? 0.0 : t.beta * c));
      }
  return C;
}

class LibraryLayoutsFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!CudaDriver::available()) GTEST_SKIP() << "no CUDA driver/GPU";
    context_ = std::make_unique<PrimaryContext>(0);
  }

  // Runs `t` through the library and returns why it is wrong, or empty.
  std::string check(Library& lib, const Case& t, unsigned seed);
  std::unique_ptr<PrimaryContext> context_;
  test::ScratchDir dir_;
};

std::vector<float> filled(const Stored& s, long long stride, int batch, std::mt19937& rng, float pad) {
  std::vector<float> v(static_cast<size_t>(stride * (batch - 1) + s.span()), pad);
  std::uniform_int_distribution<int> d(-4, 4);
  for (int b = 0; b < batch; ++b)
    for (int r = 0; r < s.rows; ++r)
      for (int c = 0; c < s.cols; ++c) v[static_cast<size_t>(b * stride + s.at(r, c))] = static_cast<float>(d(rng));
  return v;
}

std::string LibraryLayoutsFixture::check(Library& lib, const Case& t, unsigned seed) {
  std::mt19937 rng(seed);
  const Operands o = operandsOf(t);
  const float nan = std::nanf("");
  auto A = filled(o.a, o.strideA, t.batch, rng, nan), B = filled(o.b, o.strideB, t.batch, rng, nan);
  auto C0 = filled(o.c, o.strideC, t.batch, rng, kCanary);
  const auto want = hostReference(t, o, A, B, C0);
  // beta == 0 never reads C: NaN inside every batch's C would show.
  auto Cin = C0;
  if (t.beta == 0)
    for (int b = 0; b < t.batch; ++b)
      for (int i = 0; i < t.m; ++i)
        for (int j = 0; j < t.n; ++j) Cin[static_cast<size_t>(b * o.strideC + o.c.at(i, j))] = nan;
  DeviceBuffer dA(A.size() * 4), dB(B.size() * 4), dC(Cin.size() * 4);
  dA.upload(A.data(), A.size() * 4), dB.upload(B.data(), B.size() * 4), dC.upload(Cin.data(), Cin.size() * 4);
  auto ptr = [](const DeviceBuffer& d, long long off) { return reinterpret_cast<float*>(d.ptr()) + off; };
  Status st;
  if (t.arrays) {
    // Batch b's matrices at b·stride, listed in reverse order: a kernel assuming A + b·stride fails.
    std::vector<const float*> pa, pb;
    std::vector<float*> pc;
    for (int b = t.batch - 1; b >= 0; --b)
      pa.push_back(ptr(dA, b * o.strideA)), pb.push_back(ptr(dB, b * o.strideB)), pc.push_back(ptr(dC, b * o.strideC));
    DeviceBuffer arrA(pa.size() * 8), arrB(pb.size() * 8), arrC(pc.size() * 8);
    arrA.upload(pa.data(), pa.size() * 8), arrB.upload(pb.data(), pb.size() * 8), arrC.upload(pc.data(), pc.size() * 8);
    // The arrays list batch batch-1-i at i: product i reads and writes batch batch-1-i, which the
    // reference computed from the same data: the results coincide.
    st = lib.sgemmBatched(nullptr, t.order, t.opA, t.opB, t.m, t.n, t.k, t.alpha,
                          reinterpret_cast<const float* const*>(arrA.ptr()), o.a.ld,
                          reinterpret_cast<const float* const*>(arrB.ptr()), o.b.ld, t.beta,
                          reinterpret_cast<float* const*>(arrC.ptr()), o.c.ld, t.batch);
    drv().check(drv().cuCtxSynchronize(), "cuCtxSynchronize");
  } else if (t.batch > 1) {
    st = lib.sgemmStridedBatched(nullptr, t.order, t.opA, t.opB, t.m, t.n, t.k, t.alpha, ptr(dA, 0), o.a.ld, o.strideA,
                                 ptr(dB, 0), o.b.ld, o.strideB, t.beta, ptr(dC, 0), o.c.ld, o.strideC, t.batch);
  } else {
    st = lib.sgemm(nullptr, t.order, t.opA, t.opB, t.m, t.n, t.k, t.alpha, ptr(dA, 0), o.a.ld, ptr(dB, 0), o.b.ld, t.beta,
                   ptr(dC, 0), o.c.ld);
  }
  if (st != Status::ok) return fmt::format("{}: {}", toString(st), Library::lastError());
  drv().check(drv().cuCtxSynchronize(), "cuCtxSynchronize");
  std::vector<float> got(Cin.size());
  dC.download(got.data(), got.size() * 4);
  for (size_t i = 0; i < got.size(); ++i)
    if (!(got[i] == want[i]))
      return fmt::format("C element {} (batch {}) = {}, expected {}", i, static_cast<long long>(i) / o.strideC, got[i],
                         want[i]);
  return {};
}

std::vector<Case> cases() {
  std::mt19937 rng(27);
  std::uniform_int_distribution<int> dim(1, 150), pad(0, 3), coin(0, 1);
  std::vector<Case> out;
  for (Order order : {Order::row_major, Order::column_major})
    for (Op opA : {Op::N, Op::T})
      for (Op opB : {Op::N, Op::T})
        for (int form = 0; form < 3; ++form)
          for (int i = 0; i < 3; ++i) {
            Case c{order, opA, opB, dim(rng), dim(rng), dim(rng), form == 0 ? 1 : 3, coin(rng) ? 1.0f : 0.5f,
                   i % 2 ? 2.0f : 0.0f, pad(rng), pad(rng), pad(rng), form == 2};
            if (i == 0) c.m = 1 + c.m % 7;  // skinny
            out.push_back(c);
          }
  return out;
}

}  // namespace

using libraryLayoutsGpu = LibraryLayoutsFixture;

TEST_F(libraryLayoutsGpu, EveryOrderLayoutAndBatchFormMatchesTheReference) {
  Library lib(dir_ / "none.db");  // the default kernel, told each layout
  unsigned seed = 1;
  for (const Case& c : cases()) EXPECT_EQ(check(lib, c, seed++), "") << c.text();
}

TEST_F(libraryLayoutsGpu, BatchesPastOneLaunchAreAllComputed) {
  Library lib(dir_ / "none.db");
  for (bool arrays : {false, true}) {
    const Case c{Order::column_major, Op::T, Op::N, 3, 5, 4, 2050, 1.0f, 2.0f, 1, 0, 2, arrays};
    EXPECT_EQ(check(lib, c, 99), "") << c.text();
  }
}

namespace {

// The row-major problem the library looks `c` up by: a column-major call is Cᵀ = op(B)ᵀ·op(A)ᵀ.
db::ProblemKey rowMajorKey(const Case& c) {
  const bool row = c.order == Order::row_major;
  const Op first = row ? c.opA : c.opB, second = row ? c.opB : c.opA;
  std::string layout{static_cast<char>(first), static_cast<char>(second)};
  return {row ? c.m : c.n, row ? c.n : c.m, c.k, layout, "any", c.batch};
}

// A database at `path` whose only rows are cuBLAS's, one at each case's problem: cuBLAS answers.
void writeCublasDatabase(const std::filesystem::path& path, const std::vector<Case>& all) {
  const GpuSpec gpu = queryGpu(0);
  std::set<std::string> seen;
  std::vector<db::ResultRecord> rows;
  for (const Case& c : all) {
    const db::ProblemKey k = rowMajorKey(c);
    if (!seen.insert(fmt::format("{}x{}x{} {} {}", k.m, k.n, k.k, k.layout, k.batch)).second) continue;
    db::ResultRecord r = test::cublasResult(k.layout, k.m, k.n, k.k, 100, gpu, k.batch);
    r.key.driverVersion = drv().version();
    rows.push_back(std::move(r));
  }
  test::writeDatabase(path, gpu, rows);
}

}  // namespace

TEST_F(libraryLayoutsGpu, ThroughCublasEveryOrderLayoutAndBatchFormMatchesTheReference) {
  std::vector<Case> all = cases();
  for (bool arrays : {false, true}) all.push_back({Order::column_major, Op::T, Op::N, 3, 5, 4, 2050, 1.0f, 2.0f, 1, 0, 2, arrays});
  writeCublasDatabase(dir_ / "cublas.db", all);
  Library lib(Library::Options{{(dir_ / "cublas.db").string()}});
  unsigned seed = 1;
  for (const Case& c : all) {
    const db::ProblemKey k = rowMajorKey(c);
    const Choice choice = lib.best(0, Op(k.layout[0]), Op(k.layout[1]), k.m, k.n, k.k, k.batch);
    EXPECT_EQ(choice.instance, "cublas_" + k.layout) << c.text();
    EXPECT_EQ(choice.match, Match::exact) << c.text();
    EXPECT_EQ(check(lib, c, seed++), "") << c.text();
  }
}
