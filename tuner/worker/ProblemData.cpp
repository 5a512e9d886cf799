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

CUdeviceptr at(CUdeviceptr base, long long floatsIn) { return base + 4ull * static_cast<std::uint64_t>(floatsIn); }

// The matrices `o` places in the allocation at `alloc`; through `array` when the layout hands out
// pointers.
DeviceMatrix matrixIn(CUdeviceptr alloc, const OperandPlacement& o, CUdeviceptr array) {
  return {array ? 0 : at(alloc, o.start(0)), o.rows, o.cols, o.ld, o.count, o.stride, array};
}
}  // namespace

ProblemData::ProblemData(const Problem& p, const GpuContext& gpu, const HelperKernels& k, const Cublas& blas)
    : problem_(p), layout_(ProblemLayout::of(p, gpu.attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE))) {
  const auto& cu = gpu.cu();
  size_t free = 0, total = 0;
  cu.check(cu.cuMemGetInfo(&free, &total), "cuMemGetInfo");
  if (layout_.deviceBytes + kMemoryMargin > free)
    throw UsageError(fmt::format("problem {} needs {:.2f} GiB of GPU memory, {:.2f} GiB of {:.2f} GiB are free",
                                 p.shape().str(), gib(layout_.deviceBytes + kMemoryMargin), gib(free), gib(total)));
  const std::size_t a = 4 * layout_.aElems, b = 4 * layout_.bElems, c = 4 * layout_.cElems;

  intA_ = DeviceBuffer(a), intB_ = DeviceBuffer(b), intC0_ = DeviceBuffer(c);
  intRef0_ = DeviceBuffer(c), intRef2_ = DeviceBuffer(c), intAbs_ = DeviceBuffer(c);
  normA_ = DeviceBuffer(a), normB_ = DeviceBuffer(b), normRef_ = DeviceBuffer(c), normAbs_ = DeviceBuffer(c);
  scratch_ = DeviceBuffer(c);

  // One fill over every batch: each batch holds inputs of its own, so a kernel that computes
  // some other batch's product (or batch 0's everywhere) fails.
  k.fillInt(intA_.ptr(), layout_.aElems, kSeedIntA, layout_.intRange);
  k.fillInt(intB_.ptr(), layout_.bElems, kSeedIntB, layout_.intRange);
  k.fillInt(intC0_.ptr(), layout_.cElems, kSeedIntC, layout_.intRange);
  k.fillNormal(normA_.ptr(), layout_.aElems, kSeedNormA);
  k.fillNormal(normB_.ptr(), layout_.bElems, kSeedNormB);
  computeReferences(gpu, k, blas);

  for (int i = 1; i < layout_.rotationCopies; ++i) {
    Set s{DeviceBuffer(a), DeviceBuffer(b), DeviceBuffer(c)};
    cu.check(cu.cuMemcpyDtoD(s.A.ptr(), normA_.ptr(), a), "copying A for L2 rotation");
    cu.check(cu.cuMemcpyDtoD(s.B.ptr(), normB_.ptr(), b), "copying B for L2 rotation");
    k.fillNormal(s.C.ptr(), layout_.cElems, kSeedCopyC + static_cast<std::uint32_t>(i));
    copies_.push_back(std::move(s));
  }
  k.fillNormal(scratch_.ptr(), layout_.cElems, kSeedCopyC);

  for (const CheckGeometry* g : ProblemLayout::geometries(p)) layouts_.push_back(buffersFor(*g, k));
  gpu.sync();
}

// The references keep to the logical, packed inputs (C = A·B whatever the storage): cuBLAS in
// pedantic FP32, all batches in one strided call.
void ProblemData::computeReferences(const GpuContext& gpu, const HelperKernels& k, const Cublas& blas) {
  const auto& cu = gpu.cu();
  const long long M = problem_.M, N = problem_.N, K = problem_.K, n = problem_.batch;
  const Cublas::Math exact = Cublas::Math::Pedantic;
  blas.sgemm(exact, M, N, K, 1.0f, intA_.ptr(), intB_.ptr(), 0.0f, intRef0_.ptr(), n);
  cu.check(cu.cuMemcpyDtoD(intRef2_.ptr(), intC0_.ptr(), 4 * layout_.cElems), "copying C0");
  blas.sgemm(exact, M, N, K, 1.0f, intA_.ptr(), intB_.ptr(), 2.0f, intRef2_.ptr(), n);
  blas.sgemm(exact, M, N, K, kNormalCheckAlpha, normA_.ptr(), normB_.ptr(), 0.0f, normRef_.ptr(), n);
  DeviceBuffer absA = floats(layout_.aElems), absB = floats(layout_.bElems);
  for (auto [A, B, out] : {std::tuple{intA_.ptr(), intB_.ptr(), intAbs_.ptr()},
                           std::tuple{normA_.ptr(), normB_.ptr(), normAbs_.ptr()}}) {
    k.absCopy(A, absA.ptr(), layout_.aElems);
    k.absCopy(B, absB.ptr(), layout_.bElems);
    blas.sgemm(exact, M, N, K, 1.0f, absA.ptr(), absB.ptr(), 0.0f, out, n);
  }
  gpu.sync();  // before absA/absB are freed under the queued work
}

// The verifier fills C and the matrices of A and B per check; every other word of A and B holds
// NaN for good, so a kernel that reads past a row's end or across a batch boundary produces NaN.
ProblemData::LayoutBuffers ProblemData::buffersFor(const CheckGeometry& g, const HelperKernels& k) const {
  LayoutBuffers l{&g, ProblemLayout::place(problem_, g), {}, {}, {}, {}};
  const CheckPlacement& pl = l.place;
  l.C = floats(pl.c.allocElems);
  if (pl.ownA) {
    l.A = floats(pl.a.allocElems);
    k.fillConstant(l.A.ptr(), pl.a.allocElems, std::numeric_limits<float>::quiet_NaN());
  }
  if (pl.ownB) {
    l.B = floats(pl.b.allocElems);
    k.fillConstant(l.B.ptr(), pl.b.allocElems, std::numeric_limits<float>::quiet_NaN());
  }
  if (pl.c.slot) {
    const long long n = problem_.batch;
    std::vector<CUdeviceptr> pointers(static_cast<std::size_t>(3 * n));
    for (long long b = 0; b < n; ++b) {
      const auto i = static_cast<std::size_t>(b);
      pointers[i] = at(l.A.ptr(), pl.a.start(b));
      pointers[i + n] = at(l.B.ptr(), pl.b.start(b));
      pointers[i + 2 * n] = at(l.C.ptr(), pl.c.start(b));
    }
    l.pointers = DeviceBuffer(pointers.size() * sizeof(CUdeviceptr));
    l.pointers.upload(pointers.data(), l.pointers.bytes());
  }
  return l;
}

SgemmArgs ProblemData::args(CUdeviceptr A, CUdeviceptr B, CUdeviceptr C, float alpha, float beta) const {
  const GemmProblem p = GemmProblem::packed(problem_.shape());
  SgemmArgs a{static_cast<int>(p.m), static_cast<int>(p.n), static_cast<int>(p.k), alpha, A, static_cast<int>(p.lda),
              B, static_cast<int>(p.ldb), beta, C, static_cast<int>(p.ldc)};
  a.layout = p.layout;
  a.batch = BatchArg{p.strideA, p.strideB, p.strideC, 0, 0, 0, static_cast<int>(p.batch)};
  return a;
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
    if (l.geometry == &kCheckGeometries[0]) return checksIn(l);
  return {};
}

std::vector<Check> ProblemData::checksIn(const LayoutBuffers& l) const {
  const CheckPlacement& pl = l.place;
  const long long n = problem_.batch;
  const bool arrays = pl.c.slot != 0;
  const CUdeviceptr arrayA = arrays ? l.pointers.ptr() : 0, arrayB = arrays ? at(arrayA, 2 * n) : 0,
                    arrayC = arrays ? at(arrayA, 4 * n) : 0;  // 8-byte pointers: two floats each
  const DeviceMatrix c = matrixIn(l.C.ptr(), pl.c, arrayC);
  auto check = [&](const char* name, CUdeviceptr A, CUdeviceptr B, float alpha, float beta, CUdeviceptr initialC,
                   CUdeviceptr ref, CUdeviceptr absAB, bool exact) {
    const DeviceMatrix a = matrixIn(pl.ownA ? l.A.ptr() : A, pl.a, arrayA), b = matrixIn(pl.ownB ? l.B.ptr() : B, pl.b, arrayB);
    SgemmArgs s = args(a.ptr, b.ptr, c.ptr, alpha, beta);
    s.lda = static_cast<int>(pl.a.ld), s.ldb = static_cast<int>(pl.b.ld), s.ldc = static_cast<int>(pl.c.ld);
    if (arrays) {
      // The plain pointers a kernel must ignore: valid memory (the packed inputs, and the canaries
      // C's first slot starts with), so one that uses them anyway computes a wrong result rather
      // than faulting.
      s.a = A, s.b = B, s.c = at(l.C.ptr(), pl.c.front);
      s.batch = BatchArg{0, 0, 0, arrayA, arrayB, arrayC, static_cast<int>(n)};
    } else {
      s.batch = BatchArg{pl.a.stride, pl.b.stride, pl.c.stride, 0, 0, 0, static_cast<int>(n)};
    }
    return Check{name, l.geometry->name, s, a, b, c, A, B, pl.ownA, pl.ownB, initialC, ref, absAB, exact,
                 GuardedC{l.C.ptr(), pl.c}};
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
