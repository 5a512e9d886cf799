// Offline profiles and the --gpu selector (GpuProfiles, GpuDetect) without a GPU.
#include <gtest/gtest.h>

#include <set>

#include "CudaDriver.hpp"
#include "GpuDetect.hpp"
#include "GpuProfiles.hpp"
#include "ExitCodes.hpp"

using namespace gemmtune;

TEST(GpuProfiles, AllRequiredProfilesExist) {
  std::set<std::string> keys;
  for (const auto& p : gpuProfiles()) keys.insert(p.key);
  for (const char* k : {"h100", "h200", "a100", "a6000", "l4", "rtx4090", "t4", "v100"}) EXPECT_TRUE(keys.count(k)) << k;
  EXPECT_EQ(gpuProfileKeys(), "h100, h200, a100, a6000, l4, rtx4090, t4, v100");
}

TEST(GpuProfiles, LimitsAreConsistent) {
  for (const auto& p : gpuProfiles()) {
    const GpuSpec& g = p.spec;
    SCOPED_TRACE(p.key);
    EXPECT_EQ(g.profile, p.key);
    EXPECT_FALSE(g.name.empty());
    EXPECT_FALSE(p.source.empty());
    EXPECT_EQ(g.deviceIndex, -1);
    EXPECT_TRUE(g.uuid.empty());
    EXPECT_GE(g.ccMajor, 7);
    EXPECT_GT(g.smCount, 0);
    EXPECT_EQ(g.maxThreadsPerBlock, 1024);
    EXPECT_EQ(g.warpSize, 32);
    EXPECT_EQ(g.maxThreadsPerSm % g.warpSize, 0);
    EXPECT_GE(g.maxThreadsPerSm, g.maxThreadsPerBlock);
    EXPECT_GE(g.maxBlocksPerSm, 16);
    EXPECT_EQ(g.regsPerSm, 65536);
    EXPECT_EQ(g.maxRegsPerThread, 255);
    EXPECT_EQ(g.regAllocUnit, 256);
    EXPECT_EQ(g.smemPerBlock, 48 * 1024);
    EXPECT_GE(g.smemPerBlockOptin, g.smemPerBlock);
    EXPECT_EQ(g.smemPerBlockOptin + g.smemReservedPerBlock, g.smemPerSm) << "opt-in max + reservation fill the SM";
    EXPECT_EQ(g.smemReservedPerBlock, g.ccMajor >= 8 ? 1024 : 0);
    EXPECT_GT(g.l2Bytes, 1 << 20);
    EXPECT_GT(g.memClockKhz, 0);
    EXPECT_GT(g.memBusWidthBits, 0);
    EXPECT_GT(g.clockKhz, 0);
    EXPECT_GT(g.totalMemBytes, 8LL << 30);
  }
}

TEST(GpuProfiles, H100MatchesHopperLimits) {
  const GpuSpec& h = findGpuProfile("h100")->spec;
  EXPECT_EQ(h.arch(), "sm_90");
  EXPECT_EQ(h.smCount, 132);
  EXPECT_EQ(h.maxThreadsPerSm, 2048);
  EXPECT_EQ(h.maxBlocksPerSm, 32);
  EXPECT_EQ(h.smemPerSm, 228 * 1024);
  EXPECT_EQ(h.smemPerBlockOptin, 227 * 1024);
  EXPECT_EQ(h.l2Bytes, 50 * 1024 * 1024);
}

TEST(GpuProfiles, LookupIgnoresCase) {
  ASSERT_NE(findGpuProfile("H100"), nullptr);
  EXPECT_EQ(findGpuProfile("RTX4090")->spec.arch(), "sm_89");
  EXPECT_EQ(findGpuProfile("h900"), nullptr);
}

TEST(GpuDetect, ProfileSelectorNeedsNoDriver) {
  auto gpus = resolveGpus("a6000");
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0].profile, "a6000");
  EXPECT_EQ(resolveGpu("T4").arch(), "sm_75");
}

TEST(GpuDetect, UnknownNameListsTheChoices) {
  try {
    resolveGpus("h900");
    FAIL() << "no exception";
  } catch (const UsageError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("unknown GPU 'h900'"), std::string::npos) << m;
    EXPECT_NE(m.find("auto, all"), std::string::npos) << m;
    EXPECT_NE(m.find("h100, h200, a100, a6000, l4, rtx4090, t4, v100"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos);
  }
  EXPECT_THROW(resolveGpus("-1"), UsageError);
  EXPECT_THROW(resolveGpus(""), UsageError);
}

TEST(GpuDetect, AllIsRefusedWhereOneGpuIsNeeded) {
  EXPECT_THROW(resolveGpu("all"), UsageError);
}

TEST(GpuDetect, DeviceSelectorsWithoutDriverSayNoGpu) {
  if (CudaDriver::available()) GTEST_SKIP() << "a CUDA driver is present";
  for (const char* sel : {"auto", "0", "3", "all"}) {
    try {
      resolveGpus(sel);
      FAIL() << sel;
    } catch (const NoGpuError& e) {
      std::string m = e.what();
      EXPECT_EQ(m.rfind("no CUDA GPU for --gpu ", 0), 0u) << m;
      EXPECT_NE(m.find("h100"), std::string::npos) << m;
      EXPECT_EQ(exitCodeOf(e), kExitUnavailable);
    }
  }
  EXPECT_TRUE(detectGpus().empty());
  EXPECT_EQ(defaultArch(), "sm_90");
}

TEST(GpuDetect, DetectedGpusCarryTheirIdentity) {
  if (!CudaDriver::available()) GTEST_SKIP() << "no CUDA driver";
  auto gpus = detectGpus();
  ASSERT_FALSE(gpus.empty());
  for (const auto& g : gpus) {
    EXPECT_TRUE(g.profile.empty());
    EXPECT_EQ(g.uuid.rfind("GPU-", 0), 0u) << g.uuid;
    EXPECT_GT(g.smCount, 0);
    EXPECT_GT(g.smemPerBlockOptin, 0);
  }
  EXPECT_EQ(defaultArch(), gpus[0].arch());
  EXPECT_THROW(resolveGpus(std::to_string(gpus.size())), UsageError);
}
