// Compiling in child processes (generator/CompileChild.hpp): the same result as NVRTC on a thread,
// compile errors carried back with their log, a crashing compiler recorded as that one compile's
// failure, and a program that cannot run falling back to compiling in-process.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "Compiler.hpp"
#include "FamilyRegistry.hpp"
#include "temp_dir.hpp"

using namespace gemmtune;
namespace fs = std::filesystem;

namespace {

using test::TempDir;

Config classicOf(const char* family) { return *FamilyRegistry::classic(FamilyRegistry::builtin().get(family)); }

// A "compiler program" that dies the way a crashing NVRTC would.
std::string crashingProgram(const fs::path& dir) {
  const fs::path p = dir / "crashes.sh";
  std::ofstream(p) << "#!/bin/sh\nkill -SEGV $$\n";
  ::chmod(p.c_str(), 0755);
  return p.string();
}

}  // namespace

TEST(CompileChild, AChildCompilesWhatAThreadCompiles) {
  TempDir a, b;
  const Config c = classicOf("blocktile1d");
  CompileResult onThread = Compiler({{}, a.path, 1}).compile(c, "sm_90");
  Compiler inChildren({{}, b.path, 1, GEMMTUNE_CLI});
  CompileResult inChild = inChildren.compile(c, "sm_90");
  ASSERT_TRUE(onThread.ok) << onThread.log;
  ASSERT_TRUE(inChild.ok) << inChild.log;
  EXPECT_FALSE(inChild.fromCache);
  EXPECT_EQ(inChild.cubin, onThread.cubin);
  EXPECT_EQ(inChild.loweredNames, onThread.loweredNames);
  EXPECT_EQ(inChild.resources.registers, onThread.resources.registers);
  EXPECT_EQ(inChild.sourceHash, onThread.sourceHash);
  EXPECT_EQ(inChildren.nvrtcCompiles(), 1);
  EXPECT_TRUE(inChildren.compile(c, "sm_90").fromCache);  // the child's result is the cache entry
}

TEST(CompileChild, ACompileErrorComesBackWithItsLog) {
  TempDir d;
  const Config c = classicOf("blocktile1d");
  fs::create_directories(d.path / "templates");
  std::ofstream(d.path / "templates" / c.family->templateFile) << "this_is_not_cuda;\n";
  Compiler compiler({d.path / "templates", d.path / "cache", 1, GEMMTUNE_CLI});
  CompileResult r = compiler.compile(c, "sm_90");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.log.find("this_is_not_cuda"), std::string::npos) << r.log;
  EXPECT_EQ(compiler.nvrtcCompiles(), 1);
}

TEST(CompileChild, ACrashingCompilerFailsThatCompileOnly) {
  TempDir d;
  Compiler compiler({{}, d.path, 2, crashingProgram(d.path)});
  std::vector<CompileResult> rs = compiler.compileAll({classicOf("blocktile1d"), classicOf("smem")}, "sm_90");
  for (const auto& r : rs) {
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.log.find("NVRTC crashed"), std::string::npos) << r.log;
    EXPECT_NE(r.log.find("signal 11"), std::string::npos) << r.log;
  }
}

TEST(CompileChild, AProgramThatCannotRunFallsBackToCompilingOnAThread) {
  TempDir d;
  CompileResult r = Compiler({{}, d.path, 1, (d.path / "no-such-program").string()}).compile(classicOf("smem"), "sm_90");
  EXPECT_TRUE(r.ok) << r.log;
}
