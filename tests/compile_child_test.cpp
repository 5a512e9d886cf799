// Compiling in child processes (generator/CompileChild.hpp): the same result as NVRTC on a thread,
// compile errors carried back with their log, a crashing compiler recorded as that one compile's
// failure, and a program that cannot run falling back to compiling in-process.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "CompileChild.hpp"
#include "Compiler.hpp"
#include "FamilyRegistry.hpp"
#include "scratch_dir.hpp"

using namespace gemmtune;
namespace fs = std::filesystem;

namespace {

using TempDir = test::ScratchDir;

Config classicOf(const char* family) { return *FamilyRegistry::classic(FamilyRegistry::builtin().get(family)); }

std::string script(const fs::path& dir, const std::string& name, const std::string& body) {
  const fs::path p = dir / name;
  std::ofstream(p) << "#!/bin/sh\n" << body << "\n";
  ::chmod(p.c_str(), 0755);
  return p.string();
}

// A "compiler program" that dies the way a crashing NVRTC would.
std::string crashingProgram(const fs::path& dir) { return script(dir, "crashes.sh", "kill -SEGV $$"); }

// gemmtune itself, leaving one line in `marker` per start: proof that a child ran.
std::string countingProgram(const fs::path& dir, const fs::path& marker) {
  return script(dir, "counting.sh", "echo started >> '" + marker.string() + "'\nexec '" GEMMTUNE_CLI "' \"$@\"");
}

int lines(const fs::path& file) {
  std::ifstream in(file);
  int n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

}  // namespace

TEST(CompileChild, AChildCompilesWhatAThreadCompiles) {
  TempDir a, b;
  const Config c = classicOf("blocktile1d");
  CompileResult onThread = Compiler({{}, a.path(), 1}).compile(c, "sm_90");
  Compiler inChildren({{}, b.path() / "cache", 1, countingProgram(b.path(), b.path() / "starts")});
  CompileResult inChild = inChildren.compile(c, "sm_90");
  ASSERT_TRUE(onThread.ok) << onThread.log;
  ASSERT_TRUE(inChild.ok) << inChild.log;
  EXPECT_FALSE(inChild.fromCache);
  EXPECT_EQ(inChild.cubin, onThread.cubin);
  EXPECT_EQ(inChild.loweredNames, onThread.loweredNames);
  EXPECT_EQ(inChild.resources.registers, onThread.resources.registers);
  EXPECT_EQ(inChild.sourceHash, onThread.sourceHash);
  EXPECT_EQ(inChildren.nvrtcCompiles(), 1);
  EXPECT_EQ(lines(b.path() / "starts"), 1);
  EXPECT_TRUE(inChildren.compile(c, "sm_90").fromCache);  // the child's result is the cache entry
  EXPECT_EQ(lines(b.path() / "starts"), 1);
}

TEST(CompileChild, ACompileErrorComesBackWithItsLog) {
  TempDir d;
  const Config c = classicOf("blocktile1d");
  fs::create_directories(d.path() / "templates");
  std::ofstream(d.path() / "templates" / c.family->templateFile) << "this_is_not_cuda;\n";
  for (const auto& [name, text] : Compiler({{}, {}, 1}).unit(c).headers) std::ofstream(d.path() / "templates" / name) << text;
  Compiler compiler({d.path() / "templates", d.path() / "cache", 1, countingProgram(d.path(), d.path() / "starts")});
  CompileResult r = compiler.compile(c, "sm_90");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.log.find("this_is_not_cuda"), std::string::npos) << r.log;
  EXPECT_EQ(compiler.nvrtcCompiles(), 1);
  EXPECT_EQ(lines(d.path() / "starts"), 1);
}

TEST(CompileChild, ACrashingCompilerFailsThatCompileOnly) {
  TempDir d;
  Compiler compiler({{}, d.path(), 2, crashingProgram(d.path())});
  std::vector<CompileResult> rs = compiler.compileAll({classicOf("blocktile1d"), classicOf("smem")}, "sm_90");
  for (const auto& r : rs) {
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.log.find("NVRTC died"), std::string::npos) << r.log;
    EXPECT_NE(r.log.find("signal 11"), std::string::npos) << r.log;
  }
}

TEST(CompileChild, AProgramThatCannotRunFallsBackToCompilingOnAThread) {
  TempDir d;
  CompileResult r = Compiler({{}, d.path(), 1, (d.path() / "no-such-program").string()}).compile(classicOf("smem"), "sm_90");
  EXPECT_TRUE(r.ok) << r.log;
}

// A cache the child cannot write brings nothing back: compiling then moves onto threads for good
// (one warning), rather than compiling every configuration twice.
TEST(CompileChild, AnUnwritableCacheMovesCompilingOntoThreadsOnce) {
  TempDir d;
  std::ofstream(d.path() / "file") << "not a directory";
  Compiler compiler({{}, d.path() / "file" / "cache", 1, countingProgram(d.path(), d.path() / "starts")});
  EXPECT_TRUE(compiler.compile(classicOf("smem"), "sm_90").ok);
  EXPECT_TRUE(compiler.compile(classicOf("blocktile1d"), "sm_90").ok);
  EXPECT_EQ(lines(d.path() / "starts"), 1);
}

// A compile that hangs is killed at the deadline and fails that configuration only.
TEST(CompileChild, AHungCompileIsKilledAtTheDeadline) {
  TempDir d;
  const CompileCache cache(d.path() / "cache");
  const Config c = classicOf("smem");
  Compiler compiler({{}, d.path() / "cache", 1});
  const CompileUnit unit = compiler.unit(c);
  ChildCompile r = compileInChild(script(d.path(), "hangs.sh", "sleep 600"), unit, "sm_90", cache,
                                  CompileCache::key(unit, "sm_90"), 1);
  ASSERT_TRUE(r.result);
  EXPECT_FALSE(r.result->ok);
  EXPECT_NE(r.result->log.find("did not finish within 1 s"), std::string::npos) << r.result->log;
}
