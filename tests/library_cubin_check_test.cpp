// The checks a stored binary passes before the driver sees it: a sound CUDA ELF (nothing it points
// at lies outside the blob), an entry point that is the kernel of the row's configuration, a
// kernel the GPU can hold. Uses NVRTC (no GPU needed) for a real cubin.
// Run: ctest -R libraryCubinCheck
#include <gtest/gtest.h>

#include <cstring>

#include "Compiler.hpp"
#include "CubinCheck.hpp"
#include "FamilyRegistry.hpp"
#include "library_test_support.hpp"

using namespace gemmtune;
using namespace gemmtune::library;

namespace {

const CompileResult& realCubin() {
  static const CompileResult r = [] {
    CompilerOptions options;
    options.cacheDir.clear();
    options.jobs = 1;
    Compiler compiler(options);
    return compiler.compile(FamilyRegistry::builtin().parseName("blocktile1d_bm64_bn64_bk8_tm8_guarded"), "sm_90");
  }();
  return r;
}

Config config(const std::string& name) { return FamilyRegistry::builtin().parseName(name); }

}  // namespace

TEST(libraryCubinCheck, ManglePrefixIsWhatNvrtcLowersTheNameExpressionTo) {
  ASSERT_TRUE(realCubin().ok) << realCubin().log;
  EXPECT_EQ(manglePrefix(config("blocktile1d_bm64_bn64_bk8_tm8_guarded")),
            "_Z18sgemm_blocktile_1dILi64ELi64ELi8ELi8ELb1ELb0ELb0EE");
  EXPECT_TRUE(realCubin().loweredName.starts_with(manglePrefix(config("blocktile1d_bm64_bn64_bk8_tm8_guarded"))))
      << realCubin().loweredName;
}

// Launch-only parameters are no template arguments: every split-K slice count is one kernel, so
// the stored binary of _sk4 names the same entry point as _sk1 (as NVRTC lowered it on an H100).
TEST(libraryCubinCheck, ManglePrefixLeavesOutLaunchOnlyParameters) {
  const std::string lowered = "_Z18sgemm_cutlass_simtILi64ELi64ELi8ELi32ELi32ELi5ELi4ELb0ELb0ELb0EEviiifPKfiS1_ifPfi13GemmtuneBatchPi";
  for (const char* name : {"cutlass_bm64_bn64_bk8_wm32_wn32_st5_sw4_sk4", "cutlass_bm64_bn64_bk8_wm32_wn32_st5_sw4_sk1"})
    EXPECT_TRUE(lowered.starts_with(manglePrefix(config(name)))) << name << ": " << manglePrefix(config(name));
}

// The layout flags follow the form in the mangled name: a tn program's entry point (as NVRTC 13.5
// lowered it for sm_90) is the tn config's and not the nn one's.
TEST(libraryCubinCheck, ManglePrefixCarriesTheLayoutFlags) {
  const std::string lowered = "_Z18sgemm_cutlass_simtILi128ELi256ELi8ELi64ELi64ELi4ELi4ELb0ELb1ELb0EEviiifPKfiS1_ifPfi13GemmtuneBatchPi";
  EXPECT_TRUE(lowered.starts_with(manglePrefix(config("cutlass_bm128_bn256_bk8_wm64_wn64_st4_sw4_sk1_tn"))));
  EXPECT_FALSE(lowered.starts_with(manglePrefix(config("cutlass_bm128_bn256_bk8_wm64_wn64_st4_sw4_sk1"))));
  EXPECT_FALSE(lowered.starts_with(manglePrefix(config("cutlass_bm128_bn256_bk8_wm64_wn64_st4_sw4_sk1_nt"))));
}

TEST(libraryCubinCheck, ARealCubinPasses) {
  ASSERT_TRUE(realCubin().ok) << realCubin().log;
  EXPECT_EQ(cubinProblem(realCubin().cubin), std::nullopt);
  EXPECT_EQ(storedBinaryProblem(config("blocktile1d_bm64_bn64_bk8_tm8_guarded"), realCubin().cubin,
                                realCubin().loweredNames, test::h100()),
            std::nullopt);
}

TEST(libraryCubinCheck, DamagedBlobsAreRefused) {
  ASSERT_TRUE(realCubin().ok);
  const std::string& good = realCubin().cubin;
  EXPECT_EQ(cubinProblem("").value_or(""), "not an ELF file");
  EXPECT_EQ(cubinProblem(std::string("\x7f" "ELF\2\1", 6) + "fixture").value_or(""), "not an ELF file");
  EXPECT_NE(cubinProblem(good.substr(0, good.size() / 2)), std::nullopt);  // truncated
  EXPECT_NE(cubinProblem(good.substr(0, 64)), std::nullopt);

  std::string otherMachine = good;
  otherMachine[0x12] = 62;  // x86-64
  otherMachine[0x13] = 0;
  EXPECT_NE(cubinProblem(otherMachine).value_or("").find("not CUDA"), std::string::npos);

  std::string farSections = good;
  std::uint64_t shoff = 0;
  std::memcpy(&shoff, farSections.data() + 0x28, 8);
  shoff += 1u << 30;
  std::memcpy(farSections.data() + 0x28, &shoff, 8);
  EXPECT_EQ(cubinProblem(farSections).value_or(""), "section headers outside the file");
}

TEST(libraryCubinCheck, AnEntryPointOfAnotherConfigurationIsRefused) {
  ASSERT_TRUE(realCubin().ok);
  // The guarded kernel's binary stored under the unguarded name, and the other way round.
  auto why = storedBinaryProblem(config("blocktile1d_bm64_bn64_bk8_tm8"), realCubin().cubin, realCubin().loweredNames,
                                 test::h100());
  EXPECT_NE(why.value_or("").find("is not the kernel of blocktile1d_bm64_bn64_bk8_tm8"), std::string::npos)
      << why.value_or("");
  auto wrongFamily = storedBinaryProblem(config("smem_bs32_guarded"), realCubin().cubin, realCubin().loweredNames,
                                         test::h100());
  EXPECT_TRUE(wrongFamily.has_value());
  // The right name, but not in this binary.
  std::string renamed = realCubin().loweredNames[0] + "x";
  auto missing = storedBinaryProblem(config("blocktile1d_bm64_bn64_bk8_tm8_guarded"), realCubin().cubin, {renamed},
                                     test::h100());
  EXPECT_NE(missing.value_or("").find("holds no kernel"), std::string::npos) << missing.value_or("");
}

TEST(libraryCubinCheck, MoreRegistersThanTheGpuHasAreRefused) {
  ASSERT_TRUE(realCubin().ok);
  GpuSpec tiny = test::h100();
  tiny.maxRegsPerThread = 8;
  auto why = storedBinaryProblem(config("blocktile1d_bm64_bn64_bk8_tm8_guarded"), realCubin().cubin,
                                 realCubin().loweredNames, tiny);
  EXPECT_NE(why.value_or("").find("registers per thread"), std::string::npos) << why.value_or("");
}
