// NVRTC compiles of template instances: a representative sample of each family compiles for
// sm_80 and sm_90 (or is rejected by a named constraint), resources from ptxas' log agree with
// the cubin, and compile errors are results rather than exceptions.
#include <gtest/gtest.h>

#include <random>

#include "Compiler.hpp"
#include "CubinInfo.hpp"
#include "FamilyRegistry.hpp"
#include "NvrtcCompiler.hpp"
#include "PtxasLog.hpp"
#include "PtxStats.hpp"
#include "Sha256.hpp"
#include "TemplateSource.hpp"
#include "gemmtune/Errors.hpp"

using namespace gemmtune;

namespace {

const FamilyRegistry& reg() { return FamilyRegistry::builtin(); }

// The classic configs, each parameter's extremes, and 50 random points of the default space.
std::vector<Config> representativeSample() {
  std::vector<Config> out;
  const auto& smem = reg().get("smem");
  const auto& bt = reg().get("blocktile1d");
  for (int bs : smem.params[0].domain) out.push_back({&smem, {bs}, bs % 16 == 0});
  out.push_back(reg().parseName("blocktile1d_bm64_bn64_bk8_tm8"));
  out.push_back(reg().parseName("blocktile1d_bm64_bn64_bk8_tm8_guarded"));
  for (size_t p = 0; p < bt.params.size(); ++p)
    for (int v : {bt.params[p].domain.front(), bt.params[p].domain.back()}) {
      Config c{&bt, {64, 64, 8, 8}, p % 2 == 0};
      c.values[p] = v;
      out.push_back(c);
    }
  auto space = FamilyRegistry::enumerate(bt, false);
  std::mt19937 rng(20261121);
  std::shuffle(space.begin(), space.end(), rng);
  space.resize(50);
  for (auto& c : space) {
    c.guarded = rng() % 2;
    out.push_back(c);
  }
  return out;
}

}  // namespace

TEST(NvrtcCompiler, RepresentativeSampleCompilesOrIsRejectedByANamedConstraint) {
  Compiler compiler({{}, {}, 0});  // no disk cache: really compile
  auto sample = representativeSample();
  std::vector<Config> valid;
  int rejected = 0;
  for (const auto& c : sample) {
    if (const Constraint* bad = c.violated()) {
      EXPECT_FALSE(bad->name.empty());
      ++rejected;
    } else {
      valid.push_back(c);
    }
  }
  EXPECT_GT(valid.size(), 40u);
  EXPECT_GT(rejected, 0);
  for (const char* arch : {"sm_80", "sm_90"}) {
    auto results = compiler.compileAll(valid, arch);
    for (size_t i = 0; i < valid.size(); ++i) {
      const auto& r = results[i];
      ASSERT_TRUE(r.ok) << valid[i].name() << " for " << arch << ":\n" << r.log;
      EXPECT_NE(r.ptx.find(".entry " + r.loweredName), std::string::npos) << valid[i].name();
      EXPECT_GT(r.cubin.size(), 1000u);
      EXPECT_GT(r.resources.registers, 0) << valid[i].name();
      // The log's register count must match the one ptxas recorded in the cubin.
      auto info = readCubinKernelInfo(r.cubin, r.loweredName);
      ASSERT_TRUE(info) << valid[i].name();
      EXPECT_EQ(info->registers, r.resources.registers) << valid[i].name() << " " << arch;
      if (valid[i].family->name == "smem") {
        EXPECT_EQ(r.resources.staticSmemBytes, valid[i].family->staticSmemBytes(valid[i]));
      }
    }
  }
}

TEST(NvrtcCompiler, CompileErrorIsAResultWithTheLog) {
  auto r = NvrtcCompiler::compile("template <int X> __global__ void k(float* p) { p[0] = undeclared_name; }",
                                  "k<1>", "sm_90");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.log.find("undeclared_name"), std::string::npos) << r.log;
  EXPECT_TRUE(r.cubin.empty());
}

TEST(NvrtcCompiler, StaticAssertOfATemplateIsACompileErrorWithItsMessage) {
  const auto& bt = reg().get("blocktile1d");
  Config bad{&bt, {64, 64, 8, 3}, false};  // TM does not divide BM
  Compiler compiler({{}, {}, 1});
  auto r = compiler.compile(bad, "sm_90");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.log.find("TM must divide BM"), std::string::npos) << r.log;
}

TEST(NvrtcCompiler, UnknownArchIsAUsageErrorListingChoices) {
  try {
    NvrtcCompiler::checkArch("sm_91x");
    FAIL();
  } catch (const UsageError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("unknown arch 'sm_91x'"), std::string::npos);
    EXPECT_NE(m.find("sm_90"), std::string::npos);
  }
  EXPECT_NO_THROW(NvrtcCompiler::checkArch("sm_80"));
}

TEST(PtxasLog, ParsesTheBlockOfTheRequestedEntryOnly) {
  const char* log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function '_Z1av' for 'sm_90'\n"
      "ptxas info    : Function properties for _Z1av\n"
      "    8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads\n"
      "ptxas info    : Used 255 registers, used 1 barriers, 8 bytes stack frame, 4096 bytes smem, 400 bytes cmem[0]\n"
      "ptxas info    : Compiling entry function '_Z1bv' for 'sm_90'\n"
      "ptxas info    : Function properties for _Z1bv\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 40 registers, used 0 barriers, 360 bytes cmem[0]\n";
  auto a = parsePtxasLog(log, "_Z1av");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->registers, 255);
  EXPECT_EQ(a->stackFrameBytes, 8);
  EXPECT_EQ(a->spillStoreBytes, 4);
  EXPECT_EQ(a->spillLoadBytes, 12);
  EXPECT_EQ(a->staticSmemBytes, 4096);
  EXPECT_EQ(a->constBytes, 400);
  auto b = parsePtxasLog(log, "_Z1bv");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->registers, 40);
  EXPECT_EQ(b->staticSmemBytes, 0);
  EXPECT_FALSE(parsePtxasLog(log, "_Z1cv"));
}

TEST(CubinInfo, RejectsGarbageWithoutReadingOutOfBounds) {
  EXPECT_FALSE(readCubinKernelInfo("", "k"));
  EXPECT_FALSE(readCubinKernelInfo("\x7f" "ELF\x02garbage", "k"));
  std::string fake(128, '\0');
  fake.replace(0, 5, "\x7f" "ELF\x02");
  fake[0x3c] = '\x7f';  // absurd section count, section table out of range
  EXPECT_FALSE(readCubinKernelInfo(fake, "k"));
}

TEST(PtxStats, OneDBlocktilingDoesMoreFmasPerSharedLoadThanSmemTiling) {
  Compiler compiler({{}, {}, 2});
  auto smem = compiler.compile(reg().parseName("smem_bs32"), "sm_90");
  auto bt = compiler.compile(reg().parseName("blocktile1d_bm64_bn64_bk8_tm8"), "sm_90");
  ASSERT_TRUE(smem.ok && bt.ok);
  auto s = countPtx(smem.ptx), b = countPtx(bt.ptx);
  EXPECT_EQ(s.barSync, 2);
  EXPECT_GT(s.ldShared, 0);
  EXPECT_GT(b.fma, 0);
  EXPECT_GT(b.fmaPerSharedLoad(), 2 * s.fmaPerSharedLoad());
}

TEST(PtxStats, CountsPredicatedInstructionsAndSkipsDirectives) {
  auto st = countPtx(
      ".visible .entry k(\n{\n  .reg .f32 %f<4>;\n  @%p1 ld.global.f32 %f1, [%rd1];\n"
      "  ld.shared.v4.f32 {%f1,%f2,%f3,%f4}, [%r1];\n  fma.rn.f32 %f1, %f2, %f3, %f1;\n"
      "  bar.sync 0;\n  st.shared.f32 [%r2], %f1;\n$L__BB0_1:\n  ret;\n}\n");
  EXPECT_EQ(st.ldGlobal, 1);
  EXPECT_EQ(st.ldShared, 1);
  EXPECT_EQ(st.stShared, 1);
  EXPECT_EQ(st.fma, 1);
  EXPECT_EQ(st.barSync, 1);
  EXPECT_EQ(st.total, 6);
}

TEST(CubinInfo, ResourcesFromTheCubinAgreeWithPtxasLog) {
  Compiler compiler({{}, {}, 2});
  for (const char* arch : {"sm_80", "sm_90"})
    for (const char* name : {"smem_bs32", "smem_bs8_guarded", "blocktile1d_bm64_bn64_bk8_tm8", "blocktile1d_bm128_bn32_bk16_tm16"}) {
      auto r = compiler.compile(reg().parseName(name), arch);
      ASSERT_TRUE(r.ok);
      auto fromCubin = resourcesFromCubin(r.cubin, r.loweredName, arch);
      ASSERT_TRUE(fromCubin) << name;
      EXPECT_EQ(fromCubin->registers, r.resources.registers) << name << " " << arch;
      EXPECT_EQ(fromCubin->staticSmemBytes, r.resources.staticSmemBytes) << name << " " << arch;
    }
  EXPECT_FALSE(resourcesFromCubin("not an elf", "k", "sm_90"));
}

TEST(NvrtcCompiler, OneProgramCompilesEveryKernelOfAUnitWithItsHeaders) {
  CompileUnit u;
  u.source = "#include \"scale.cuh\"\n"
             "template <int S> __global__ void main_k(float* p) { p[0] *= S * kScale; }\n"
             "template <int S> __global__ void reduce_k(float* p) { p[1] += S; }\n";
  u.expressions = {"main_k<2>", "reduce_k<3>"};
  u.headers = {{"scale.cuh", "constexpr float kScale = 0.5f;\n"}};
  CompileResult r = NvrtcCompiler::compile(u, "sm_90");
  ASSERT_TRUE(r.ok) << r.log;
  ASSERT_EQ(r.loweredNames.size(), 2u);
  EXPECT_EQ(r.loweredName, r.loweredNames[0]);
  EXPECT_NE(r.loweredNames[0].find("main_k"), std::string::npos);
  EXPECT_NE(r.loweredNames[1].find("reduce_k"), std::string::npos);
  EXPECT_GT(r.resources.registers, 0);
  EXPECT_EQ(r.sourceHash, u.sourceHash());
}

TEST(CompileUnit, SourceHashIsTheSourcesAloneWithoutHeadersAndCoversThem) {
  CompileUnit u{"source", {"k<1>"}, {}, {}};
  EXPECT_EQ(u.sourceHash(), Sha256::of("source"));  // keys of plain templates never changed
  CompileUnit withHeader = u;
  withHeader.headers = {{"h.cuh", "int x;"}};
  CompileUnit otherHeader = u;
  otherHeader.headers = {{"h.cuh", "int y;"}};
  EXPECT_NE(withHeader.sourceHash(), u.sourceHash());
  EXPECT_NE(withHeader.sourceHash(), otherHeader.sourceHash());
  CompileUnit otherKernels = u;
  otherKernels.expressions = {"k<2>"};
  EXPECT_EQ(otherKernels.sourceHash(), u.sourceHash());  // one hash per family, whatever the kernels
}

TEST(CompileUnit, LoweredNamesRoundTripThroughTheStoredField) {
  const std::vector<std::string> names{"_Z6main_kILi2EEvPf", "_Z8reduce_kILi3EEvPf"};
  EXPECT_EQ(joinLoweredNames(names), "_Z6main_kILi2EEvPf _Z8reduce_kILi3EEvPf");
  EXPECT_EQ(splitLoweredNames(joinLoweredNames(names)), names);
  EXPECT_EQ(splitLoweredNames("_Z4oneEv"), std::vector<std::string>{"_Z4oneEv"});
  EXPECT_TRUE(splitLoweredNames("").empty());
}

TEST(TemplateSource, AFamilysSourceHashIsEveryConfigurationsUnitHash) {
  TemplateSource templates;
  const Family& f = FamilyRegistry::builtin().get("warptile");
  Config c = FamilyRegistry::builtin().parseName("warptile_bm128_bn128_bk8_wm64_wn32_wni2_tm4_tn4_t256");
  EXPECT_EQ(templates.sourceHash(f), templates.unit(c).sourceHash());
  EXPECT_EQ(templates.unit(c).expressions, c.kernelExpressions());
}
