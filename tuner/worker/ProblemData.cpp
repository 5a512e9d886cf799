#include "ProblemData.hpp"

#include <fmt/format.h>

#include <limits>

#include "gemmtune/Errors.hpp"

namespace gemmtune {

namespace {
// Fixed seeds: a restarted worker regenerates exactly the same inputs.
constexpr std::uint32_t kSeedIntA = 11, kSeedIntB = 12, kSeedIntC = 13, kSeedNormA = 21, kSeedNormB = 22,
                        kSeedCopyC = 31;
constexpr std::uint64_t kMemoryMargin = 256ull << 20;  // cuBLAS workspace, the driver, fragmentation

double gib(std::uint64_t b) { return static_cast<double>(b) / (1ull << 30); }

DeviceBuffer floats(long long n) { return DeviceBuffer(4ull * static_cast<std::uint64_t>(n)); }
}  // namespace

ProblemData::ProblemData(const Problem& p, const GpuContext& gpu, const HelperKernels& k, const Cublas& blas)
    : problem_(p), layout_(ProblemLayout::of(p, gpu.attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE))) {
  const auto& cu = gpu.cu();
  size_t free = 0, total = 0;
  cu.check(cu.cuMemGetInfo(&free, &total), "cuMemGetInfo");
  if (layout_.deviceBytes + kMemoryMargin > free)
    throw UsageError(fmt::format("problem {}x{}x{} needs {:.2f} GiB of GPU memory, {:.2f} GiB of {:.2f} GiB are free",
                                 p.M, p.N, p.K, gib(layout_.deviceBytes + kMemoryMargin), gib(free), gib(total)));
  const std::size_t a = 4 * layout_.aElems, b = 4 * layout_.bElems, c = 4 * layout_.cElems;
  const long long M = p.M, N = p.N, K = p.K;

  intA_ = DeviceBuffer(a), intB_ = DeviceBuffer(b), intC0_ = DeviceBuffer(c);
  intRef0_ = DeviceBuffer(c), intRef2_ = DeviceBuffer(c), intAbs_ = DeviceBuffer(c);
  normA_ = DeviceBuffer(a), normB_ = DeviceBuffer(b), normRef_ = DeviceBuffer(c), normAbs_ = DeviceBuffer(c);
  scratch_ = DeviceBuffer(c);

  k.fillInt(intA_.ptr(), layout_.aElems, kSeedIntA, layout_.intRange);
  k.fillInt(intB_.ptr(), layout_.bElems, kSeedIntB, layout_.intRange);
  k.fillInt(intC0_.ptr(), layout_.cElems, kSeedIntC, layout_.intRange);
  k.fillNormal(normA_.ptr(), layout_.aElems, kSeedNormA);
  k.fillNormal(normB_.ptr(), layout_.bElems, kSeedNormB);

  blas.sgemm(Cublas::Math::Pedantic, M, N, K, 1.0f, intA_.ptr(), intB_.ptr(), 0.0f, intRef0_.ptr());
  cu.check(cu.cuMemcpyDtoD(intRef2_.ptr(), intC0_.ptr(), c), "copying C0");
  blas.sgemm(Cublas::Math::Pedantic, M, N, K, 1.0f, intA_.ptr(), intB_.ptr(), 2.0f, intRef2_.ptr());
  blas.sgemm(Cublas::Math::Pedantic, M, N, K, kNormalCheckAlpha, normA_.ptr(), normB_.ptr(), 0.0f, normRef_.ptr());
  {
    DeviceBuffer absA(a), absB(b);
    for (auto [A, B, out] : {std::tuple{intA_.ptr(), intB_.ptr(), intAbs_.ptr()},
                             std::tuple{normA_.ptr(), normB_.ptr(), normAbs_.ptr()}}) {
      k.absCopy(A, absA.ptr(), layout_.aElems);
      k.absCopy(B, absB.ptr(), layout_.bElems);
      blas.sgemm(Cublas::Math::Pedantic, M, N, K, 1.0f, absA.ptr(), absB.ptr(), 0.0f, out);
    }
    gpu.sync();  // before absA/absB are freed under the queued work
  }

  for (int i = 1; i < layout_.rotationCopies; ++i) {
    Set s{DeviceBuffer(a), DeviceBuffer(b), DeviceBuffer(c)};
    cu.check(cu.cuMemcpyDtoD(s.A.ptr(), normA_.ptr(), a), "copying A for L2 rotation");
    cu.check(cu.cuMemcpyDtoD(s.B.ptr(), normB_.ptr(), b), "copying B for L2 rotation");
    k.fillNormal(s.C.ptr(), layout_.cElems, kSeedCopyC + static_cast<std::uint32_t>(i));
    copies_.push_back(std::move(s));
  }
  k.fillNormal(scratch_.ptr(), layout_.cElems, kSeedCopyC);

  // The verifier fills C and the interiors of A and B per check; the padding of A and B holds NaN
  // for good, so a kernel that reads past a row's end produces NaN.
  for (const CheckGeometry& g : kCheckGeometries) {
    const GemmProblem gp = ProblemLayout::checkProblem(p, g, true);
    LayoutBuffers l{&g, {}, {}, floats(ProblemLayout::guardedCElems(p, g))};
    if (!g.packed()) {
      const long long aElems = ProblemLayout::operandElems(M, gp.lda, g.offsetBytes),
                      bElems = ProblemLayout::operandElems(K, gp.ldb, g.offsetBytes);
      l.A = floats(aElems), l.B = floats(bElems);
      k.fillConstant(l.A.ptr(), aElems, std::numeric_limits<float>::quiet_NaN());
      k.fillConstant(l.B.ptr(), bElems, std::numeric_limits<float>::quiet_NaN());
    }
    layouts_.push_back(std::move(l));
  }
  gpu.sync();
}

SgemmArgs ProblemData::args(CUdeviceptr A, CUdeviceptr B, CUdeviceptr C, float alpha, float beta) const {
  const int M = static_cast<int>(problem_.M), N = static_cast<int>(problem_.N), K = static_cast<int>(problem_.K);
  return SgemmArgs{M, N, K, alpha, A, K, B, N, beta, C, N};
}

std::vector<Check> ProblemData::checks() const {
  std::vector<Check> all;
  for (const LayoutBuffers& l : layouts_) {
    std::vector<Check> some = checksIn(l);
    all.insert(all.end(), some.begin(), some.end());
  }
  return all;
}

std::vector<Check> ProblemData::packedChecks() const {
  for (const LayoutBuffers& l : layouts_)
    if (l.geometry->packed()) return checksIn(l);
  return {};
}

std::vector<Check> ProblemData::checksIn(const LayoutBuffers& l) const {
  const CheckGeometry& g = *l.geometry;
  const GemmProblem gp = ProblemLayout::checkProblem(problem_, g, true);
  const GuardedC out{l.C.ptr(), ProblemLayout::guardedCElems(problem_, g), ProblemLayout::kGuardElems + g.offsetBytes / 4};
  const CUdeviceptr C = out.alloc + 4ull * static_cast<std::uint64_t>(out.front);
  auto check = [&](const char* name, CUdeviceptr A, CUdeviceptr B, float alpha, float beta, CUdeviceptr initialC,
                   CUdeviceptr ref, CUdeviceptr absAB, bool exact) {
    SgemmArgs a = args(A, B, C, alpha, beta);
    if (!g.packed()) a.a = l.A.ptr() + g.offsetBytes, a.b = l.B.ptr() + g.offsetBytes;
    a.lda = static_cast<int>(gp.lda), a.ldb = static_cast<int>(gp.ldb), a.ldc = static_cast<int>(gp.ldc);
    return Check{name, g.name, a, A, B, initialC, ref, absAB, exact, out};
  };
  return {
      check("small integers, beta=0", intA_.ptr(), intB_.ptr(), 1.0f, 0.0f, 0, intRef0_.ptr(), intAbs_.ptr(), true),
      check("small integers, beta=2", intA_.ptr(), intB_.ptr(), 1.0f, 2.0f, intC0_.ptr(), intRef2_.ptr(), intAbs_.ptr(),
            true),
      check("random normal, beta=0", normA_.ptr(), normB_.ptr(), kNormalCheckAlpha, 0.0f, 0, normRef_.ptr(),
            normAbs_.ptr(), false),
  };
}

SgemmArgs ProblemData::timingArgs(int rep) const {
  const int copy = rep % layout_.rotationCopies;
  const auto beta = static_cast<float>(problem_.beta);
  if (copy == 0) return args(normA_.ptr(), normB_.ptr(), scratch_.ptr(), 1.0f, beta);
  const Set& s = copies_[static_cast<std::size_t>(copy - 1)];
  return args(s.A.ptr(), s.B.ptr(), s.C.ptr(), 1.0f, beta);
}

}  // namespace gemmtune
