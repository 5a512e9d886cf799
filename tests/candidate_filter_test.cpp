// CandidateFilter and CandidateSpace: each filter's status and reason, with synthetic compile
// results (no NVRTC) except for one small real sample.
#include <gtest/gtest.h>

#include <filesystem>

#include "CandidateSpace.hpp"
#include "FamilyRegistry.hpp"
#include "GpuProfiles.hpp"
#include "gemmtune/Errors.hpp"

using namespace gemmtune;

namespace {

const FamilyRegistry& registry() { return FamilyRegistry::builtin(); }
const GpuSpec& gpu(const char* key) { return findGpuProfile(key)->spec; }

Config blocktile(int bm, int bn, int bk, int tm, bool guarded = true) {
  return Config{&registry().get("blocktile1d"), {bm, bn, bk, tm}, guarded};
}
Config smem(int bs, bool guarded = true) { return Config{&registry().get("smem"), {bs}, guarded}; }

std::shared_ptr<const CompileResult> compiled(int registers, int staticSmem = 0, int spill = 0) {
  auto r = std::make_shared<CompileResult>();
  r->ok = true;
  r->resources.registers = registers;
  r->resources.staticSmemBytes = staticSmem;
  r->resources.spillStoreBytes = r->resources.spillLoadBytes = spill;
  return r;
}

}  // namespace

TEST(CandidateFilter, StaticConstraintCarriesItsReason) {
  Candidate c = checkBeforeCompile(blocktile(16, 64, 8, 32), gpu("h100"), std::nullopt);
  EXPECT_EQ(c.stage, CandidateStage::Static);
  EXPECT_EQ(c.status(), "rejected:constraint");
  const Constraint* bad = c.config.violated();
  ASSERT_NE(bad, nullptr);
  EXPECT_EQ(bad->name, "tm_divides_bm");
  EXPECT_EQ(c.describe(), "rejected:constraint tm_divides_bm: " + bad->reason);
}

TEST(CandidateFilter, SharedMemoryAboveOptInMaximum) {
  // (16 + 4 + 256) * 64 * 4 = 70656 B: above the T4's 64 KiB opt-in maximum, fine on an H100.
  Candidate t4 = checkBeforeCompile(blocktile(16, 256, 64, 4), gpu("t4"), std::nullopt);
  EXPECT_EQ(t4.describe(), "rejected:smem 70656 B > 65536 B opt-in maximum per block");
  Candidate h100 = checkBeforeCompile(blocktile(16, 256, 64, 4), gpu("h100"), std::nullopt);
  EXPECT_TRUE(h100.accepted());
  EXPECT_TRUE(h100.smemOptIn);
  EXPECT_EQ(h100.dynamicSmemBytes, 70656);
  EXPECT_EQ(h100.threadsPerBlock, 1024);
}

TEST(CandidateFilter, SharedMemoryWithoutOptIn) {
  GpuSpec noOptIn = gpu("h100");
  noOptIn.smemPerBlockOptin = noOptIn.smemPerBlock;
  // (256 + 4 + 8) * 64 * 4 = 68608 B.
  Candidate c = checkBeforeCompile(blocktile(256, 8, 64, 8), noOptIn, std::nullopt);
  EXPECT_EQ(c.describe(), "rejected:smem 68608 B > 49152 B without opt-in (this GPU allows no more)");
}

TEST(CandidateFilter, ThreadsPerBlock) {
  GpuSpec small = gpu("h100");
  small.maxThreadsPerBlock = 256;
  EXPECT_EQ(checkBeforeCompile(smem(32), small, std::nullopt).describe(), "rejected:threads 1024 > 256 per block");
}

TEST(CandidateFilter, GridLimit) {
  // M = 2,000,000 with BM = 16 needs 125000 blocks in y: above 65535.
  Candidate c = checkBeforeCompile(blocktile(16, 64, 8, 1), gpu("h100"), GemmShape{2000000, 64, 64});
  EXPECT_EQ(c.describe(), "rejected:grid y 125000 > 65535");
}

TEST(CandidateFilter, RegistersPerBlockWithAllocationGranularity) {
  const GpuSpec& h = gpu("h100");
  Candidate c = checkBeforeCompile(smem(32), h, std::nullopt);
  checkAfterCompile(c, h, compiled(65, 8192), std::nullopt);
  EXPECT_EQ(c.describe(), "rejected:regs 65×1024 → 73728 allocated > 65536 per block");
  ASSERT_TRUE(c.occupancy);
  EXPECT_EQ(c.occupancy->blocksPerSm, 0);

  Candidate exact = checkBeforeCompile(smem(32), h, std::nullopt);
  checkAfterCompile(exact, h, compiled(128, 8192), std::nullopt);
  EXPECT_EQ(exact.describe(), "rejected:regs 128×1024 = 131072 > 65536 per block");

  Candidate fits = checkBeforeCompile(smem(32), h, std::nullopt);
  checkAfterCompile(fits, h, compiled(64, 8192), std::nullopt);
  EXPECT_TRUE(fits.accepted());
  EXPECT_EQ(fits.occupancy->blocksPerSm, 1);
}

TEST(CandidateFilter, RegistersPerThread) {
  const GpuSpec& h = gpu("h100");
  Candidate c = checkBeforeCompile(blocktile(32, 32, 8, 32), h, std::nullopt);  // 32 threads
  checkAfterCompile(c, h, compiled(256), std::nullopt);
  EXPECT_EQ(c.describe(), "rejected:regs 256 > 255 per thread");
}

TEST(CandidateFilter, SpillsAreFlaggedNotRejectedByDefault) {
  const GpuSpec& h = gpu("h100");
  Candidate kept = checkBeforeCompile(blocktile(64, 64, 8, 32), h, std::nullopt);
  checkAfterCompile(kept, h, compiled(96, 0, 16), std::nullopt);
  EXPECT_TRUE(kept.accepted());
  EXPECT_EQ(kept.note, "spills 16 B stored, 16 B loaded");

  Candidate strict = checkBeforeCompile(blocktile(64, 64, 8, 32), h, std::nullopt);
  checkAfterCompile(strict, h, compiled(96, 0, 16), std::nullopt, FilterOptions{.rejectSpills = true});
  EXPECT_EQ(strict.describe(), "rejected:spills spills 16 B stored, 16 B loaded");
}

TEST(CandidateFilter, CompileErrorKeepsTheFirstErrorLine) {
  const GpuSpec& h = gpu("h100");
  Candidate c = checkBeforeCompile(smem(16), h, std::nullopt);
  auto failed = std::make_shared<CompileResult>();
  failed->log = "gemmtune_instance.cu(3): warning: unused\ngemmtune_instance.cu(9): error: identifier \"x\" is undefined\n";
  checkAfterCompile(c, h, failed, std::nullopt);
  EXPECT_EQ(c.status(), "compile_error");
  EXPECT_EQ(c.reason, "gemmtune_instance.cu(9): error: identifier \"x\" is undefined");
}

TEST(CandidateFilter, PruningIsOptInAndVisible) {
  const GpuSpec& h = gpu("h100");
  const GemmShape small{64, 64, 64};  // smem_bs32: 2×2 blocks for 132 SMs
  Candidate plain = checkBeforeCompile(smem(32, false), h, small);
  checkAfterCompile(plain, h, compiled(32, 8192), small);
  EXPECT_TRUE(plain.accepted());

  Candidate pruned = checkBeforeCompile(smem(32, false), h, small);
  checkAfterCompile(pruned, h, compiled(32, 8192), small, FilterOptions{.prune = true});
  EXPECT_EQ(pruned.describe(), "pruned:underfill 4 blocks < 132 SMs at size 64");
}

// A plan whose main kernel is not its first launch (fp16x3: six split passes first): the grid a
// candidate carries, and what underfill pruning and the search model read, is the GEMM's. Before,
// the first pass's (32 lines of A per block) was read: every fp16x3 configuration had the same
// grid, and at 4096x4096x512 all were pruned as 128 blocks < 132 SMs.
TEST(CandidateFilter, TheGridIsTheMainKernelsWhereOtherLaunchesComeFirst) {
  const GpuSpec& h = gpu("h100");
  const GemmShape shape{4096, 4096, 512};
  const Config c = registry().parseName("fp16x3_bm128_bn256_bk64_wm64_wn64_st4_sw4");
  Candidate candidate = checkBeforeCompile(c, h, shape);
  ASSERT_TRUE(candidate.grid.has_value()) << candidate.describe();
  EXPECT_EQ(candidate.grid->volume(), 32ULL * 16);  // 4096/128 × 4096/256 tiles
  checkAfterCompile(candidate, h, compiled(255, 384), shape, FilterOptions{.prune = true});
  EXPECT_TRUE(candidate.accepted()) << candidate.describe();
}

TEST(CandidateSpace, ChoosesTheUnguardedFormOnlyWhereTheSizeDivides) {
  SpaceOptions o;
  o.size = GemmShape{1000, 1000, 1000};
  auto configs = spaceConfigs(registry().get("smem"), o);
  ASSERT_EQ(configs.size(), 4u);
  EXPECT_EQ(configs[0].name(), "smem_bs8");          // 8 divides 1000
  EXPECT_EQ(configs[1].name(), "smem_bs16_guarded");
  EXPECT_EQ(configs[2].name(), "smem_bs24_guarded");
  EXPECT_EQ(configs[3].name(), "smem_bs32_guarded");

  o.size.reset();
  for (const auto& c : spaceConfigs(registry().get("smem"), o)) EXPECT_TRUE(c.guarded);
  o.bothForms = true;
  EXPECT_EQ(spaceConfigs(registry().get("smem"), o).size(), 8u);
}

TEST(CandidateSpace, FixedParametersNarrowTheDomains) {
  const Family& f = registry().get("blocktile1d");
  SpaceOptions o;
  o.domains = parseParamDomains(f, "bm=16,BN=256,TM=4");
  auto screened = screenSpace(f, gpu("t4"), o);
  ASSERT_EQ(screened.size(), f.params[2].domain.size());  // only BK varies
  SpaceSummary s = SpaceSummary::of(screened);
  EXPECT_EQ(s.enumerated, 5);
  EXPECT_EQ(s.staticallyRejected, 1);  // BK=64: 69632 B
  EXPECT_EQ(s.accepted, 4);            // still to compile
  EXPECT_EQ(s.line(), "5 enumerated, 1 statically rejected, 0 compiled, 0 compile errors, 0 rejected after compile, "
                      "0 pruned, 4 left to time");
}

// --params may widen a domain past its defaults (up to 16 times the largest default).
TEST(CandidateSpace, ParameterDomainsMayGoBeyondTheDefaults) {
  const Family& f = registry().get("blocktile1d");
  SpaceOptions o;
  o.domains = parseParamDomains(f, "BM=512,BN=64,BK=8,TM=8/64");
  std::vector<std::string> names;
  for (const Config& c : spaceConfigs(f, o)) names.push_back(c.name());
  EXPECT_EQ(names, (std::vector<std::string>{"blocktile1d_bm512_bn64_bk8_tm8_guarded", "blocktile1d_bm512_bn64_bk8_tm64_guarded"}));
  EXPECT_THROW(parseParamDomains(f, "BM=8192"), UsageError);  // 16 x 256 is the bound
}

TEST(CandidateSpace, BadParametersAndSizes) {
  const Family& f = registry().get("blocktile1d");
  EXPECT_THROW(parseParamDomains(f, "XX=4"), UsageError);
  EXPECT_THROW(parseParamDomains(f, "BM=0"), UsageError);
  EXPECT_THROW(parseParamDomains(f, "BM=16,BM=32"), UsageError);
  EXPECT_THROW(parseParamDomains(f, "BM"), UsageError);
  EXPECT_THROW(parseParamDomains(f, "BM=16/"), UsageError);
  EXPECT_THROW(parseParamDomains(f, "BM=16/x"), UsageError);
  // Several values, in any order and repeated: the domain searched, ascending.
  EXPECT_EQ(parseParamDomains(f, "tm=8/2/8").at("TM"), (std::vector<int>{2, 8}));
  EXPECT_EQ(parseOneSize("4096").M, 4096);
  EXPECT_EQ(parseOneSize("4096x1024x512").K, 512);
  EXPECT_THROW(parseOneSize("40x96"), UsageError);
  EXPECT_THROW(parseOneSize("1024,2048"), UsageError);
  EXPECT_THROW(parseOneSize("-5"), UsageError);
}

// One real NVRTC round trip on a two-candidate sample: compiled resources flow into occupancy.
TEST(CandidateSpace, CompilesASampleForTheProfileArch) {
  const GpuSpec& h = gpu("h100");
  const Family& f = registry().get("blocktile1d");
  SpaceOptions o;
  o.size = GemmShape{4096, 4096, 4096};
  o.domains = parseParamDomains(f, "BM=64,BN=64,TM=8");
  o.domains["BK"] = {8};
  auto dir = std::filesystem::temp_directory_path() / "gemmtune-candidate-space-test";
  Compiler compiler(CompilerOptions{{}, dir, 2});
  std::vector<Candidate> cs = buildSpace(f, h, compiler, o);
  ASSERT_EQ(cs.size(), 1u);
  const Candidate& c = cs[0];
  EXPECT_EQ(c.config.name(), "blocktile1d_bm64_bn64_bk8_tm8");
  EXPECT_TRUE(c.accepted()) << c.describe();
  ASSERT_TRUE(c.compiled && c.compiled->ok);
  EXPECT_EQ(c.compiled->arch, "sm_90");
  EXPECT_GT(c.compiled->resources.registers, 0);
  ASSERT_TRUE(c.occupancy);
  EXPECT_EQ(c.occupancy->warpsPerBlock, 16);
  EXPECT_GE(c.occupancy->blocksPerSm, 1);
  ASSERT_TRUE(c.grid);
  EXPECT_EQ(c.grid->x, 64u);
  EXPECT_EQ(c.grid->y, 64u);
}
