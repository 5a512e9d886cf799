// NvrtcLibrary: NVRTC loaded at run time. The search order and its errors in-process (fresh loads,
// not the process-wide one); switching NVRTC with GEMMTUNE_NVRTC through the CLI in a child
// process, since a process keeps the NVRTC it loaded first.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "CliRunner.hpp"
#include "gemmtune/Errors.hpp"
#include "NvrtcLibrary.hpp"

using namespace gemmtune;
using gemmtune::test::runCli;
namespace fs = std::filesystem;

namespace {

const fs::path kToolkitNvrtc = "/usr/local/cuda/lib64/libnvrtc.so.13";
const fs::path kPinnedNvrtc = fs::path(GEMMTUNE_BUILD_DEPS_DIR) / "nvrtc" / "lib" / "libnvrtc.so.13";
constexpr const char* kOlder = "older than the pinned 13.5";

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string messageOf(const std::vector<NvrtcCandidate>& candidates) {
  try {
    NvrtcLibrary::load(candidates);
  } catch (const UnavailableError& e) {
    return e.what();
  }
  return "(loaded)";
}

}  // namespace

// Cubins from NVRTC 13.x need a CUDA 13 driver: a 12.x driver gets the toolkit's NVRTC.
TEST(NvrtcLibrary, AnOlderDriverPassesThePinnedCopiesOver) {
  for (const auto& c : NvrtcLibrary::searchOrder(nullptr, 12080)) EXPECT_EQ(c.origin, "toolkit") << c.path;
  auto withDriver13 = NvrtcLibrary::searchOrder(nullptr, 13000);
  ASSERT_FALSE(withDriver13.empty());
  EXPECT_EQ(withDriver13.front().origin, "installed");
  EXPECT_EQ(NvrtcLibrary::searchOrder("/opt/nvrtc/libnvrtc.so.13", 12080).at(0).origin, "GEMMTUNE_NVRTC");  // the user decides
}

TEST(NvrtcLibrary, GemmtuneNvrtcIsTheOnlyPlaceLookedAtWhenSet) {
  auto order = NvrtcLibrary::searchOrder("/opt/nvrtc/libnvrtc.so.13");
  ASSERT_EQ(order.size(), 1u);
  EXPECT_EQ(order[0].path, "/opt/nvrtc/libnvrtc.so.13");
  EXPECT_EQ(order[0].origin, "GEMMTUNE_NVRTC");
  EXPECT_TRUE(order[0].required);
}

TEST(NvrtcLibrary, PinnedCopiesComeBeforeTheToolkit) {
  auto order = NvrtcLibrary::searchOrder(nullptr, std::nullopt);
  auto at = [&](const std::string& path) {
    return std::find_if(order.begin(), order.end(), [&](const NvrtcCandidate& c) { return c.path == path; }) - order.begin();
  };
  ASSERT_GE(order.size(), 4u);
  for (const auto& c : order) EXPECT_FALSE(c.required) << c.path;
  EXPECT_EQ(order.front().origin, "installed");
  EXPECT_NE(order.front().path.find("gemmtune/nvrtc/libnvrtc.so.13"), std::string::npos) << order.front().path;
  auto buildTree = at(kPinnedNvrtc.string());
  ASSERT_LT(buildTree, static_cast<long>(order.size()));
  EXPECT_EQ(order[buildTree].origin, "build tree");
  EXPECT_LT(buildTree, at("libnvrtc.so.13"));
  EXPECT_LT(at("libnvrtc.so.13"), at("libnvrtc.so.12"));
  EXPECT_LT(at("libnvrtc.so.12"), at("/usr/local/cuda/lib64/libnvrtc.so.13"));
}

TEST(NvrtcLibrary, AnUnloadableGemmtuneNvrtcIsAClearError) {
  std::string missing = messageOf(NvrtcLibrary::searchOrder("/nonexistent/libnvrtc.so.13"));
  EXPECT_NE(missing.find("GEMMTUNE_NVRTC='/nonexistent/libnvrtc.so.13' cannot be loaded"), std::string::npos) << missing;

  const fs::path notElf = fs::temp_directory_path() / "gemmtune-not-nvrtc.so";
  std::ofstream(notElf) << "not a shared library\n";
  std::string bogus = messageOf(NvrtcLibrary::searchOrder(notElf.c_str()));
  EXPECT_NE(bogus.find(notElf.string()), std::string::npos) << bogus;
  EXPECT_NE(bogus.find("point it at a libnvrtc.so.* or unset it"), std::string::npos) << bogus;
  fs::remove(notElf);

  // A shared library that is not NVRTC.
  std::string other = messageOf({{"libm.so.6", "GEMMTUNE_NVRTC", true}});
  EXPECT_NE(other.find("not an NVRTC library: nvrtcGetErrorString missing"), std::string::npos) << other;
}

TEST(NvrtcLibrary, NoneFoundSaysWhatToDo) {
  std::string m = messageOf({{"/nonexistent/a/libnvrtc.so.13", "build tree", false}, {"libnvrtc.so.99", "toolkit", false}});
  EXPECT_NE(m.find("no NVRTC found"), std::string::npos) << m;
  EXPECT_NE(m.find("libnvrtc.so.99: "), std::string::npos) << m;  // tried, with the loader's reason
  EXPECT_EQ(m.find("/nonexistent/a"), std::string::npos) << m;    // absent files are not news
  EXPECT_NE(m.find("run scripts/build.sh"), std::string::npos) << m;
  EXPECT_NE(m.find("GEMMTUNE_NVRTC"), std::string::npos) << m;
}

TEST(NvrtcLibrary, FallsBackToTheNextCandidateAndReportsWhatItLoaded) {
  if (!fs::exists(kToolkitNvrtc)) GTEST_SKIP() << kToolkitNvrtc << " absent";
  auto lib = NvrtcLibrary::load({{"/nonexistent/libnvrtc.so.13", "installed", false}, {kToolkitNvrtc.string(), "toolkit", false}});
  EXPECT_EQ(lib.path(), kToolkitNvrtc.string());
  EXPECT_EQ(lib.origin(), "toolkit");
  EXPECT_GE(lib.major(), 12);
  EXPECT_EQ(lib.version(), std::to_string(lib.major()) + "." + std::to_string(lib.minor()));
  EXPECT_EQ(lib.describe().rfind("NVRTC " + lib.version() + " from " + kToolkitNvrtc.string() + " (toolkit)", 0), 0u)
      << lib.describe();
  EXPECT_EQ(lib.describe().find(kOlder) != std::string::npos, !lib.pinned()) << lib.describe();
  int archs = 0;
  ASSERT_EQ(lib.nvrtcGetNumSupportedArchs(&archs), NVRTC_SUCCESS);
  EXPECT_GT(archs, 0);
}

TEST(NvrtcLibraryCli, VersionNamesTheNvrtcInUse) {
  auto r = runCli({"--version"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out.rfind("gemmtune 0.1.0\nNVRTC ", 0), 0u) << r.out;
  if (fs::exists(kPinnedNvrtc)) {  // scripts/build.sh fetched it: the build tree's copy is used
    EXPECT_NE(r.out.find("NVRTC 13.5 from " + kPinnedNvrtc.string() + " (build tree)\n"), std::string::npos) << r.out;
  }
}

TEST(NvrtcLibraryCli, GemmtuneNvrtcSelectsTheToolkitsAndItCompiles) {
  if (!fs::exists(kToolkitNvrtc)) GTEST_SKIP() << kToolkitNvrtc << " absent";
  const std::string env = "GEMMTUNE_NVRTC=" + kToolkitNvrtc.string();
  auto v = runCli({"--version"}, {env});
  ASSERT_EQ(v.exitCode, 0) << v.err;
  EXPECT_NE(v.out.find(" from " + kToolkitNvrtc.string() + " (GEMMTUNE_NVRTC)"), std::string::npos) << v.out;
  const bool older = v.out.find(kOlder) != std::string::npos;

  // Compiler and NvrtcCompiler both ask to warn about an older NVRTC: it comes once per process.
  auto r = runCli({"ptx", "smem_bs16", "--stats", "--arch", "sm_80", "--no-cache"}, {env});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("threads per block     256"), std::string::npos) << r.out;
  EXPECT_EQ(count(r.err, kOlder), older ? 1u : 0u) << r.err;
  if (older) {
    EXPECT_NE(r.err.find("Run scripts/build.sh to fetch it, or set GEMMTUNE_NVRTC."), std::string::npos) << r.err;
  }

  auto j = runCli({"gpus", "--json"}, {env});
  ASSERT_EQ(j.exitCode, 0) << j.err;
  auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc.at("nvrtc").at("path"), kToolkitNvrtc.string());
  EXPECT_EQ(doc.at("nvrtc").at("pinned"), !older);
}

TEST(NvrtcLibraryCli, ThePinnedNvrtcCompilesWithoutAWarning) {
  if (!fs::exists(kPinnedNvrtc)) GTEST_SKIP() << "not fetched (scripts/fetch-deps.sh): " << kPinnedNvrtc;
  auto r = runCli({"ptx", "blocktile1d_bm64_bn64_bk8_tm8", "--stats", "--arch", "sm_90", "--no-cache"},
                  {"GEMMTUNE_NVRTC=" + kPinnedNvrtc.string()});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("fma.rn.f32"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "");
  auto g = runCli({"gpus"}, {"GEMMTUNE_NVRTC=" + kPinnedNvrtc.string()});
  ASSERT_EQ(g.exitCode, 0) << g.err;
  EXPECT_EQ(g.out.rfind("NVRTC 13.5 from " + kPinnedNvrtc.string() + " (GEMMTUNE_NVRTC)\n", 0), 0u) << g.out;
}

TEST(NvrtcLibraryCli, ABogusGemmtuneNvrtcStopsWithOneLineAndExit69) {
  auto r = runCli({"ptx", "smem_bs16", "--arch", "sm_90", "--no-cache"}, {"GEMMTUNE_NVRTC=/nonexistent/libnvrtc.so.13"});
  EXPECT_EQ(r.exitCode, 69) << r.err;
  EXPECT_NE(r.err.find("GEMMTUNE_NVRTC='/nonexistent/libnvrtc.so.13' cannot be loaded"), std::string::npos) << r.err;
  EXPECT_EQ(count(r.err, "\n"), 1u) << r.err;
  // --version still answers, saying what is wrong.
  auto v = runCli({"--version"}, {"GEMMTUNE_NVRTC=/nonexistent/libnvrtc.so.13"});
  EXPECT_EQ(v.exitCode, 0) << v.err;
  EXPECT_NE(v.out.find("NVRTC: none (GEMMTUNE_NVRTC='/nonexistent/libnvrtc.so.13' cannot be loaded"), std::string::npos)
      << v.out;
}
