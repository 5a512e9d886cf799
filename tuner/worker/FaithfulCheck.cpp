#include "FaithfulCheck.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "gemmtune/Errors.hpp"

namespace gemmtune {

namespace {
// Fixed seeds: a restarted worker judges on exactly the same inputs.
constexpr std::uint32_t kSeedUniformA = 41, kSeedUniformB = 42, kSeedNormalA = 43, kSeedNormalB = 44,
                        kSeedWideA = 45, kSeedWideB = 46, kSeedWideRows = 47, kSeedWideCols = 48, kSeedSpecialA = 49,
                        kSeedSpecialB = 50;
constexpr std::uint64_t kMemoryMargin = 256ull << 20;

DeviceBuffer floats(long long n) { return DeviceBuffer(4ull * static_cast<std::uint64_t>(n)); }
DeviceBuffer doubles(long long n) { return DeviceBuffer(8ull * static_cast<std::uint64_t>(n)); }
CUdeviceptr at(CUdeviceptr base, long long floatsIn) { return base + 4ull * static_cast<std::uint64_t>(floatsIn); }

void append(std::string& list, const std::string& item) { list += (list.empty() ? "" : "; ") + item; }
}  // namespace

std::string FaithfulVerdict::summary() const {
  std::string s;
  for (const SetFigures& f : sets)
    append(s, fmt::format("{} max {:.2g} F {:.2g} (cuBLAS {:.2g} {:.2g})", f.set, f.candidate.maxRelative,
                          f.candidate.frobenius, f.cublas.maxRelative, f.cublas.frobenius));
  return "faithful: " + s;
}

FaithfulData::FaithfulData(const Problem& p, const GpuContext& gpu, const HelperKernels& k, const AccuracyKernels& acc,
                           const Cublas& blas)
    : problem_(p), gpu_(gpu), k_(k), acc_(acc), aElems_(p.batch * p.M * p.K), bElems_(p.batch * p.K * p.N),
      cElems_(p.batch * p.M * p.N) {
  const auto& cu = gpu.cu();
  size_t free = 0, total = 0;
  cu.check(cu.cuMemGetInfo(&free, &total), "cuMemGetInfo");
  const auto inputs = static_cast<std::uint64_t>(4 * (aElems_ + bElems_)) * (p.layout.transA || p.layout.transB ? 2 : 1);
  const std::uint64_t need = 4 * inputs + static_cast<std::uint64_t>(cElems_) * (3 * 16 + 8) + kMemoryMargin;
  if (need > free)
    throw UsageError(fmt::format("the faithful checks of {} need {:.2f} GiB of GPU memory, {:.2f} GiB are free",
                                 p.shape().str(), need / double(1ull << 30), free / double(1ull << 30)));
  C_ = floats(cElems_);
  cublasSpecials_ = floats(cElems_);
  sets_.push_back(makeSet(kFaithfulSets[0], [&](Set& s) {
    acc.fillUniform(s.A.ptr(), aElems_, kSeedUniformA);
    acc.fillUniform(s.B.ptr(), bElems_, kSeedUniformB);
  }));
  sets_.push_back(makeSet(kFaithfulSets[1], [&](Set& s) {
    k.fillNormal(s.A.ptr(), aElems_, kSeedNormalA);
    k.fillNormal(s.B.ptr(), bElems_, kSeedNormalB);
  }));
  sets_.push_back(makeSet(kFaithfulSets[2], [&](Set& s) {
    acc.fillUniform(s.A.ptr(), aElems_, kSeedWideA);
    acc.fillUniform(s.B.ptr(), bElems_, kSeedWideB);
    acc.scaleLines(s.A.ptr(), p.batch, p.M, p.K, /*byRow=*/true, kSeedWideRows);
    acc.scaleLines(s.B.ptr(), p.batch, p.K, p.N, /*byRow=*/false, kSeedWideCols);
  }));
  specials_ = makeSet("Inf/NaN", [&](Set& s) {
    acc.fillUniform(s.A.ptr(), aElems_, kSeedSpecialA);
    acc.fillUniform(s.B.ptr(), bElems_, kSeedSpecialB);
    plantSpecials(s);
  });
  const auto sgemm = [&](const SgemmArgs& a) { blas.gemm(Cublas::Math::Default, a); };
  for (Set& s : sets_) {
    run(s, sgemm);
    s.cublas = acc.errors(C_.ptr(), s.ref.ptr(), s.absAB.ptr(), cElems_);
  }
  run(specials_, sgemm);
  cu.check(cu.cuMemcpyDtoD(cublasSpecials_.ptr(), C_.ptr(), 4ull * static_cast<std::uint64_t>(cElems_)),
           "keeping cuBLAS's Inf/NaN result");
  gpu.sync();
}

FaithfulData::Set FaithfulData::makeSet(const std::string& name, const std::function<void(Set&)>& fill) const {
  const Problem& p = problem_;
  Set s{name, floats(aElems_), floats(bElems_), {}, {}, {}, {}, {}};
  fill(s);
  // Stored as op(A) and op(B) read them: transposed copies where the layout says T.
  if (p.layout.transA) {
    s.storedA = floats(aElems_);
    k_.copyInto(s.A.ptr(), DeviceMatrix::packed(s.storedA.ptr(), p.K, p.M, p.batch), true);
  }
  if (p.layout.transB) {
    s.storedB = floats(bElems_);
    k_.copyInto(s.B.ptr(), DeviceMatrix::packed(s.storedB.ptr(), p.N, p.K, p.batch), true);
  }
  if (name != "Inf/NaN") {
    s.ref = doubles(cElems_), s.absAB = doubles(cElems_);
    acc_.referenceF64(s.A.ptr(), s.B.ptr(), s.ref.ptr(), s.absAB.ptr(), p.M, p.N, p.K, p.batch);
  }
  return s;
}

// In every batch: NaN at A(0, K-1), +Inf at A(M-1, 0), -Inf at B(K-1, N-1). Rows and columns of C
// then hold NaN, ±Inf by the signs of finite partners, and Inf - Inf = NaN where they cross.
void FaithfulData::plantSpecials(Set& s) const {
  const auto& cu = gpu_.cu();
  const Problem& p = problem_;
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const float minusInf = -inf;
  for (long long b = 0; b < p.batch; ++b) {
    const long long a0 = b * p.M * p.K, b0 = b * p.K * p.N;
    cu.check(cu.cuMemcpyHtoD(at(s.A.ptr(), a0 + p.K - 1), &nan, 4), "planting NaN");
    cu.check(cu.cuMemcpyHtoD(at(s.A.ptr(), a0 + (p.M - 1) * p.K), &inf, 4), "planting +Inf");
    cu.check(cu.cuMemcpyHtoD(at(s.B.ptr(), b0 + p.K * p.N - 1), &minusInf, 4), "planting -Inf");
  }
}

SgemmArgs FaithfulData::argsFor(const Set& s) const {
  const GemmProblem p = GemmProblem::packed(problem_.shape());
  const CUdeviceptr A = p.layout.transA ? s.storedA.ptr() : s.A.ptr(), B = p.layout.transB ? s.storedB.ptr() : s.B.ptr();
  SgemmArgs a{static_cast<int>(p.m), static_cast<int>(p.n), static_cast<int>(p.k), 1.0f, A, static_cast<int>(p.lda),
              B, static_cast<int>(p.ldb), static_cast<float>(problem_.beta), C_.ptr(), static_cast<int>(p.ldc)};
  a.layout = p.layout;
  a.batch = BatchArg{p.strideA, p.strideB, p.strideC, 0, 0, 0, static_cast<int>(p.batch)};
  return a;
}

void FaithfulData::run(const Set& s, const std::function<void(const SgemmArgs&)>& launch) const {
  k_.fillConstant(C_.ptr(), cElems_, 0.0f);
  launch(argsFor(s));
  gpu_.sync();  // a fault surfaces here
}

FaithfulVerdict FaithfulData::judge(const std::function<void(const SgemmArgs&)>& launch) const {
  FaithfulVerdict v;
  for (const Set& s : sets_) {
    run(s, launch);
    const ErrorFigures f = acc_.errors(C_.ptr(), s.ref.ptr(), s.absAB.ptr(), cElems_);
    v.sets.push_back({s.name, f, s.cublas});
    // cuBLAS SGEMM's own error not finite would let anything pass below: no verdict on this set.
    if (!std::isfinite(s.cublas.maxRelative) || !std::isfinite(s.cublas.frobenius))
      append(v.detail, fmt::format("faithful, {}: cuBLAS SGEMM's own error is not finite here, no comparison "
                                   "possible", s.name));
    if (!(f.maxRelative <= s.cublas.maxRelative))
      append(v.detail, fmt::format("faithful, {}: max |C-C64|/(|A||B|) {:.3g} above cuBLAS SGEMM's {:.3g}", s.name,
                                   f.maxRelative, s.cublas.maxRelative));
    if (!(f.frobenius <= s.cublas.frobenius))
      append(v.detail, fmt::format("faithful, {}: relative Frobenius error {:.3g} above cuBLAS SGEMM's {:.3g}", s.name,
                                   f.frobenius, s.cublas.frobenius));
  }
  run(specials_, launch);
  if (const CompareStats m = k_.classMismatch(C_.ptr(), cublasSpecials_.ptr(), cElems_); m.bad) {
    const auto& cu = gpu_.cu();
    float got = 0, want = 0;
    cu.check(cu.cuMemcpyDtoH(&got, at(C_.ptr(), static_cast<long long>(m.firstBad)), 4), "reading a wrong element");
    cu.check(cu.cuMemcpyDtoH(&want, at(cublasSpecials_.ptr(), static_cast<long long>(m.firstBad)), 4),
             "reading cuBLAS's element");
    const long long i = static_cast<long long>(m.firstBad), mn = problem_.M * problem_.N;
    append(v.detail, fmt::format("faithful, NaN and ±Inf inputs: {} elements not NaN/Inf as cuBLAS SGEMM's, first at "
                                 "({}, {}){}: got {:g}, cuBLAS {:g}",
                                 m.bad, i % mn / problem_.N, i % problem_.N,
                                 problem_.batch > 1 ? fmt::format(" (batch {})", i / mn) : "", got, want));
  }
  v.ok = v.detail.empty();
  return v;
}

}  // namespace gemmtune
