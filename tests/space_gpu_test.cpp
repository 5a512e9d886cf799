// The candidate space against a real GPU (label gpu): for every compiled candidate of every
// family, our occupancy equals cuOccupancyMaxActiveBlocksPerMultiprocessor and ptxas' register
// count equals the loaded function's; every accepted candidate launches (KernelLauncher) and
// computes ones×ones correctly, so no launch-resource error slips through the filters.
#include <gtest/gtest.h>
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "CandidateSpace.hpp"
#include "CudaDriver.hpp"
#include "DeviceBuffer.hpp"
#include "FamilyRegistry.hpp"
#include "GpuDetect.hpp"
#include "LoadedKernel.hpp"
#include "PrimaryContext.hpp"
#include "Workspace.hpp"

using namespace gemmtune;

namespace {

// Both forms of every configuration of every family, compiled once for the detected GPU.
struct RealSpace {
  GpuSpec gpu;
  std::vector<Candidate> candidates;
};

const RealSpace& realSpace() {
  static const RealSpace space = [] {
    RealSpace s;
    s.gpu = resolveGpu("auto");
    // In child processes, as `tune` compiles: NVRTC's threads barely scale on a many-core host.
    Compiler compiler({{}, CompileCache::defaultDir(), 0, GEMMTUNE_CLI});
    SpaceOptions options;
    options.bothForms = true;
    for (const auto& family : FamilyRegistry::builtin().all()) {
      // A CUTLASS instance takes seconds to compile: its tile and warp shapes (every resource
      // combination) are covered at one pipeline depth and swizzle.
      options.domains.clear();
      if (!family.headerTrees.empty()) options.domains = {{"STAGES", {3}}, {"SWIZZLE", {4}}};
      auto cs = buildSpace(family, s.gpu, compiler, options);
      s.candidates.insert(s.candidates.end(), cs.begin(), cs.end());
    }
    return s;
  }();
  return space;
}

class SpaceOnGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!CudaDriver::available() || detectGpus().empty()) GTEST_SKIP() << "no CUDA GPU";
  }
};

}  // namespace

TEST_F(SpaceOnGpu, OccupancyMatchesTheDriverForEveryCandidate) {
  const RealSpace& s = realSpace();
  PrimaryContext ctx(s.gpu.deviceIndex);
  int compared = 0;
  std::vector<std::string> occupancy, resources;
  for (const auto& c : s.candidates) {
    if (!c.compiled || !c.compiled->ok || !c.occupancy) continue;
    LoadedKernel k(c.compiled->cubin, c.compiled->loweredNames);
    const int driverBlocks = k.driverBlocksPerSm(c.threadsPerBlock, c.dynamicSmemBytes);
    const int driverRegs = k.attribute(CU_FUNC_ATTRIBUTE_NUM_REGS);
    const int driverStatic = k.attribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
    ++compared;
    if (driverBlocks != c.occupancy->blocksPerSm)
      occupancy.push_back(fmt::format("{}: blocks/SM ours {} ({}) driver {}", c.config.name(), c.occupancy->blocksPerSm,
                                      c.occupancy->limiterNames(), driverBlocks));
    if (driverRegs != c.compiled->resources.registers || driverStatic != c.staticSmemBytes)
      resources.push_back(fmt::format("{}: regs ptxas {} driver {}; static smem ptxas {} driver {}", c.config.name(),
                                      c.compiled->resources.registers, driverRegs, c.staticSmemBytes, driverStatic));
  }
  auto first20 = [](const std::vector<std::string>& v) {
    return fmt::format("{}", fmt::join(v.begin(), v.begin() + std::min<size_t>(20, v.size()), "\n"));
  };
  EXPECT_GT(compared, 100) << "too few compiled candidates to mean anything";
  EXPECT_TRUE(occupancy.empty()) << occupancy.size() << " of " << compared << " differ, e.g.\n" << first20(occupancy);
  EXPECT_TRUE(resources.empty()) << resources.size() << " of " << compared << " differ, e.g.\n" << first20(resources);
  std::printf("compared %d candidates on %s\n", compared, s.gpu.name.c_str());
}

TEST_F(SpaceOnGpu, EveryAcceptedCandidateLaunchesAndComputes) {
  const RealSpace& s = realSpace();
  PrimaryContext ctx(s.gpu.deviceIndex);
  const CudaDriver& d = CudaDriver::get();
  // Two tiles plus one in every dimension (guarded forms), two tiles (unguarded): tiles are at
  // most 256 × 256 × 64 in the built-in domains.
  constexpr int kMaxM = 2 * 256 + 1, kMaxK = 2 * 64 + 1;
  DeviceBuffer a(sizeof(float) * kMaxM * kMaxK), b(sizeof(float) * kMaxK * kMaxM), c(sizeof(float) * kMaxM * kMaxM);
  Workspace workspace(d);  // one for every launch: each completed run leaves its locks at zero
  const std::vector<float> ones(static_cast<size_t>(kMaxM) * kMaxK, 1.0f);
  a.upload(ones.data(), a.bytes());
  b.upload(ones.data(), b.bytes());
  std::vector<float> result(static_cast<size_t>(kMaxM) * kMaxM);

  int launched = 0;
  std::vector<std::string> failures;
  for (const auto& cand : s.candidates) {
    if (!cand.accepted()) continue;
    // Each tile edge: the smallest extent the unguarded form runs with the other two at a multiple
    // of every tile (768 = 3 · 256: small enough that split-K partial sums of 768 × 768 stay under
    // thin's workspace limit, which 3072 passed); twice that, one more for the guarded form.
    Config unguarded = cand.config;
    unguarded.guarded = false;
    auto tile = [&](int dim) {
      for (int e = 1; e <= 256; ++e) {
        long long d[3] = {768, 768, 768};
        d[dim] = e;
        if (planLaunch(unguarded, GemmProblem::packed(d[0], d[1], d[2])).runnable()) return e;
      }
      return 0;
    };
    const int extra = cand.config.guarded ? 1 : 0;
    SgemmArgs args;
    args.m = 2 * tile(0) + extra;
    args.n = 2 * tile(1) + extra;
    args.k = 2 * tile(2) + extra;
    ASSERT_LE(args.m, kMaxM);
    ASSERT_LE(args.k, kMaxK);
    args.a = a.ptr(), args.lda = args.k;
    args.b = b.ptr(), args.ldb = args.n;
    args.c = c.ptr(), args.ldc = args.n;
    c.fill32(0x7fc00000u);  // NaN: an element the kernel never writes cannot pass
    LoadedKernel k(cand.compiled->cubin, cand.compiled->loweredNames);
    const LaunchPlan plan = planLaunch(cand.config, problemOf(args));
    CUresult r = k.run(plan, args, nullptr, &workspace);  // split-K plans reserve their locks
    if (r == CUDA_SUCCESS) r = d.cuCtxSynchronize();
    ++launched;
    if (r != CUDA_SUCCESS) {
      failures.push_back(fmt::format("{}: {}", cand.config.name(), d.describe(r)));
      // A fault poisons the context; later launches would only repeat it.
      if (r != CUDA_ERROR_INVALID_VALUE && r != CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES) break;
      continue;
    }
    c.download(result.data(), sizeof(float) * args.m * args.n);
    for (int i = 0; i < args.m * args.n; ++i)
      if (result[i] != static_cast<float>(args.k)) {
        failures.push_back(fmt::format("{} at {}x{}x{}: C[{}] = {} (expected {})", cand.config.name(), args.m, args.n,
                                       args.k, i, result[i], args.k));
        break;
      }
  }
  EXPECT_GT(launched, 100);
  EXPECT_TRUE(failures.empty()) << failures.size() << " of " << launched << " failed, e.g.\n"
                                << fmt::format("{}", fmt::join(failures.begin(),
                                                               failures.begin() + std::min<size_t>(20, failures.size()), "\n"));
  std::printf("launched %d accepted candidates on %s\n", launched, s.gpu.name.c_str());
}
