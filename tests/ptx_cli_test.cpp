// `gemmtune ptx`: output, files, statistics and one-line errors with exit code 2.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "CliRunner.hpp"

using gemmtune::test::runCli;
namespace fs = std::filesystem;

namespace {
int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }
// Without the pinned NVRTC (not fetched) the first compile warns once about the older one found;
// that line is not part of an error.
std::string withoutNvrtcWarning(const std::string& err) {
  std::istringstream in(err);
  std::string out, line;
  while (std::getline(in, line))
    if (line.find("older than the pinned") == std::string::npos) out += line + '\n';
  return out;
}
}  // namespace

TEST(PtxCli, PrintsThePtxOfTheNamedInstance) {
  auto r = runCli({"ptx", "--family", "blocktile1d", "--params", "BM=64,BN=64,BK=8,TM=8", "--arch", "sm_90", "--no-cache"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find(".target sm_90"), std::string::npos);
  EXPECT_NE(r.out.find(".entry _Z18sgemm_blocktile_1dILi64ELi64ELi8ELi8ELb0ELb0ELb0EE"), std::string::npos);
}

TEST(PtxCli, StatsShowResourcesAndInstructionMix) {
  auto r = runCli({"ptx", "smem_bs32", "--stats", "--arch", "sm_80", "--no-cache"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("static smem           8192 B"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("threads per block     1024"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FMAs per ld.shared"), std::string::npos);
  auto j = runCli({"ptx", "smem_bs32", "--stats", "--json", "--arch", "sm_80", "--no-cache"});
  ASSERT_EQ(j.exitCode, 0) << j.err;
  EXPECT_NE(j.out.find("\"static_smem_bytes\": 8192"), std::string::npos) << j.out;
  EXPECT_EQ(j.out.find("\"ptx\""), std::string::npos);
}

TEST(PtxCli, OutDirGetsPtxAndCubinNamedByTheCanonicalName) {
  char tmpl[] = "/tmp/gemmtune-ptx-out-XXXXXX";
  fs::path dir = ::mkdtemp(tmpl);
  auto r = runCli({"ptx", "blocktile1d_bm32_bn64_bk16_tm4_guarded", "--arch", "sm_90", "-o", (dir / "k").string(), "--no-cache"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(r.out.empty());
  EXPECT_GT(fs::file_size(dir / "k" / "blocktile1d_bm32_bn64_bk16_tm4_guarded.sm_90.ptx"), 1000u);
  EXPECT_GT(fs::file_size(dir / "k" / "blocktile1d_bm32_bn64_bk16_tm4_guarded.sm_90.cubin"), 1000u);
  fs::remove_all(dir);
}

TEST(PtxCli, SassSaysClearlyWhenNoDisassemblerExists) {
  auto r = runCli({"ptx", "smem_bs16", "--sass", "--no-cache"}, {"PATH=/nonexistent", "CUDA_HOME=/nonexistent"});
  if (fs::exists("/usr/local/cuda/bin/cuobjdump") || fs::exists("/usr/local/cuda/bin/nvdisasm")) {
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("FFMA"), std::string::npos);
  } else {
    EXPECT_EQ(r.exitCode, 69);
    EXPECT_NE(r.err.find("--sass needs cuobjdump or nvdisasm"), std::string::npos) << r.err;
    EXPECT_EQ(lines(withoutNvrtcWarning(r.err)), 1) << r.err;
  }
}

// A disassembler that fails says why in one line: its own last line, not the blank first line of
// the listing it had begun (cuobjdump without nvdisasm beside it printed "cuobjdump failed: ").
// Where both are installed, nvdisasm runs: it needs no other tool.
TEST(PtxCli, AFailingDisassemblerSaysWhyAndNvdisasmComesFirst) {
  char tmpl[] = "/tmp/gemmtune-sass-XXXXXX";
  const fs::path dir = ::mkdtemp(tmpl);
  auto script = [&](const std::string& name, const std::string& body) {
    std::ofstream(dir / name) << "#!/bin/sh\n" << body;
    fs::permissions(dir / name, fs::perms::owner_all);
  };
  script("cuobjdump", "printf '\\n\\tcode for sm_90\\ncuobjdump fatal   : Could not find executable file nvdisasm\\n'\nexit 1\n");
  auto r = runCli({"ptx", "smem_bs16", "--sass", "--no-cache"}, {"PATH=" + dir.string(), "CUDA_HOME=/nonexistent"});
  if (!fs::exists("/usr/local/cuda/bin/nvdisasm")) {
    EXPECT_EQ(r.exitCode, 69) << r.err;
    EXPECT_NE(r.err.find("cuobjdump failed: cuobjdump fatal   : Could not find executable file nvdisasm"), std::string::npos)
        << r.err;
    EXPECT_EQ(lines(withoutNvrtcWarning(r.err)), 1) << r.err;
  }
  script("nvdisasm", "echo '        /*0000*/                   FFMA R0, R1, R2, R3 ;'\n");
  r = runCli({"ptx", "smem_bs16", "--sass", "--no-cache"}, {"PATH=" + dir.string(), "CUDA_HOME=/nonexistent"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("FFMA R0, R1, R2, R3"), std::string::npos) << r.out;
  fs::remove_all(dir);
}

TEST(PtxCli, BadInputIsOneLineAndExitTwo) {
  struct Case {
    std::vector<std::string> args;
    std::string expect;
  } cases[] = {
      {{"ptx", "--family", "nosuch", "--params", "X=1"}, "unknown family 'nosuch' (choose from: smem, blocktile1d, blocktile2d, warptile, warppipe, thin, cutlass, streamk, clusterk, tf32x3, fp16x3, wgmmafp16x3)"},
      {{"ptx", "--family", "blocktile1d", "--params", "BM=64,BN=64,BK=8"}, "missing parameter TM"},
      {{"ptx", "--family", "blocktile1d", "--params", "BM=64,BN=64,BK=8,TM=zero"}, "must be a positive integer"},
      {{"ptx", "--family", "blocktile1d", "--params", "BM=64,BN=64,BK=8,TM=3"}, "violates constraint tm_divides_bm"},
      {{"ptx", "blocktile1d_bm64"}, "is not a blocktile1d instance name"},
      {{"ptx", "smem_bs32", "--arch", "sm_99"}, "unknown arch 'sm_99'"},
      {{"ptx", "smem_bs32", "--family", "smem"}, "either an instance name or --family"},
      {{"ptx"}, "give an instance name or --family"},
      {{"ptx", "smem_bs32", "--bogus"}, "--bogus"},
      {{"frobnicate"}, "frobnicate"},
  };
  for (const auto& c : cases) {
    auto r = runCli(c.args);
    EXPECT_EQ(r.exitCode, 2) << c.expect << "\n" << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_TRUE(r.out.empty());
  }
}

// A layout reaches the template's TRANS_A and TRANS_B (the last two bools of the entry's name):
// through the instance name (..._tn), positional or --instance, or --layout with --family.
TEST(PtxCli, TheLayoutReachesTheTemplate) {
  auto named = runCli({"ptx", "--instance", "smem_bs16_tn", "--arch", "sm_90", "--no-cache"});
  ASSERT_EQ(named.exitCode, 0) << named.err;
  EXPECT_NE(named.out.find(".entry _Z16sgemm_smem_tiledILi16ELb0ELb1ELb0EE"), std::string::npos) << named.out;
  auto positional = runCli({"ptx", "smem_bs16_tt_guarded", "--arch", "sm_90", "--no-cache"});
  ASSERT_EQ(positional.exitCode, 0) << positional.err;
  EXPECT_NE(positional.out.find(".entry _Z16sgemm_smem_tiledILi16ELb1ELb1ELb1EE"), std::string::npos);
  auto params = runCli({"ptx", "--family", "smem", "--params", "BLOCKSIZE=16", "--layout", "nt", "--arch", "sm_90",
                        "--no-cache", "--json", "--stats"});
  ASSERT_EQ(params.exitCode, 0) << params.err;
  EXPECT_NE(params.out.find("\"instance\": \"smem_bs16_nt\""), std::string::npos) << params.out;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"ptx", "smem_bs16_tn", "--layout", "tn"},
        std::vector<std::string>{"ptx", "--family", "smem", "--params", "BLOCKSIZE=16", "--layout", "xy"}}) {
    auto r = runCli(args);
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_EQ(lines(withoutNvrtcWarning(r.err)), 1) << r.err;
  }
  EXPECT_NE(runCli({"ptx", "smem_bs16_tn", "--layout", "tn"}).err.find("an instance name carries its layout"),
            std::string::npos);
  EXPECT_NE(runCli({"ptx", "--family", "smem", "--params", "BLOCKSIZE=16", "--layout", "xy"}).err.find("bad layout 'xy'"),
            std::string::npos);
}
