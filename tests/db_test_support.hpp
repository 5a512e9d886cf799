// Shared fixtures for the results-store tests: a scratch directory, a known GPU, and result
// records that pass validation.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "PresentEnvironment.hpp"
#include "scratch_dir.hpp"
#include "CacheKey.hpp"
#include "FamilyRegistry.hpp"
#include "ResultStore.hpp"

namespace gemmtune::test {

// A test with a scratch directory and the path of a database in it (not created).
struct ScratchDbTest : ::testing::Test {
  ScratchDir dir;
  std::string db = (dir / "tune.db").string();
};

inline std::string readBytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void writeBytes(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// An H100-like GPU; `smCount` varies the fingerprint.
inline GpuSpec testGpu(int smCount = 132) {
  GpuSpec g;
  g.name = "NVIDIA H100 80GB HBM3";
  g.ccMajor = 9;
  g.ccMinor = 0;
  g.smCount = smCount;
  g.maxThreadsPerBlock = 1024;
  g.smemPerSm = 228 * 1024;
  g.smemPerBlockOptin = 227 * 1024;
  g.smemReservedPerBlock = 1024;
  g.l2Bytes = 50 * 1024 * 1024;
  g.memClockKhz = 2619000;
  g.memBusWidthBits = 5120;
  g.uuid = "GPU-1234";
  return g;
}

inline constexpr const char* kNvrtc = "13.0";
inline constexpr int kDriver = 13000;

inline db::RunInfo testRun(const GpuSpec& gpu = testGpu()) {
  db::RunInfo r;
  r.gpu = gpu;
  r.driverVersion = kDriver;
  r.nvrtcVersion = kNvrtc;
  r.commandLine = "gemmtune tune --size 4096";
  r.host = "testhost";
  return r;
}

// The source hash the present build computes for this family's template.
inline std::string currentSourceHash(const Config& c) {
  return *serving::presentEnvironment().sourceHashOf(c.family->name);
}

// A record of `c` at M×N×K keyed for the present build on `gpu`, with the family's launch
// geometry; status ok, nothing measured.
inline db::ResultRecord currentRecord(const Config& c, long long m, long long n, long long k,
                                      const GpuSpec& gpu = testGpu()) {
  db::ResultRecord r;
  r.setConfig(c.family->name, c.name(), c.namedValues());
  r.key.gpuFingerprint = db::gpuFingerprint(gpu);
  r.key.driverVersion = kDriver;
  r.key.nvrtcVersion = *serving::presentEnvironment().nvrtcVersion;
  r.key.arch = gpu.arch();
  r.key.compileOptions = *serving::presentEnvironment().compileOptionsOf(c.family->name);
  r.key.sourceHash = currentSourceHash(c);
  r.key.problem = {m, n, k};
  r.threadsPerBlock = c.family->threadsPerBlock(c);
  r.dynamicSmemBytes = c.family->dynamicSmemBytes(c);
  r.staticSmemBytes = c.family->staticSmemBytes(c);
  return r;
}

// An ok result for `instance` at M×N×K with the given GFLOP/s, keyed for the present build.
inline db::ResultRecord okResult(const std::string& instance, long long m, long long n, long long k, double gflops,
                                 const GpuSpec& gpu = testGpu()) {
  db::ResultRecord r = currentRecord(FamilyRegistry::builtin().parseName(instance), m, n, k, gpu);
  r.gflops = gflops;
  r.medianMs = 2.0 * m * n * k / (gflops * 1e6);
  r.minMs = *r.medianMs * 0.98;
  r.spread = 0.01;
  r.reps = 20;
  r.registers = 40;
  r.occupancy = 0.5;
  r.limiter = "registers";
  r.maxError = 1e-6;
  r.smClockMHz = 1980;
  r.loweredName = "_Z18sgemm_blocktile_1dILi64ELi64ELi8ELi8ELb0EEviiifPKfS1_fPf";
  r.cubin = std::string("\x7f" "ELF\0\1\2", 7) + instance;
  return r;
}

// A failed compile of `instance` at M×N×K: no measurement, no cubin, a log with quotes and a
// newline.
inline db::ResultRecord compileError(const std::string& instance, long long m, long long n, long long k,
                                     const GpuSpec& gpu = testGpu()) {
  db::ResultRecord r = okResult(instance, m, n, k, 1, gpu);
  r.setStatus("compile_error");
  r.medianMs.reset(), r.minMs.reset(), r.spread.reset(), r.reps.reset(), r.gflops.reset();
  r.errorText = "line 1: error \"quoted\"\n";
  r.cubin.clear();
  return r;
}

// A cuBLAS baseline at size³.
inline db::BaselineRecord cublasBaseline(long long size, double medianMs, const std::string& libraryVersion) {
  db::BaselineRecord b;
  b.libraryVersion = libraryVersion;
  b.problem = {size, size, size};
  b.medianMs = medianMs;
  return b;
}

// Two stored rows are the same measurement: key, status, numbers, cubin, time and run.
inline void expectSameMeasurement(const db::StoredResult& got, const db::StoredResult& want) {
  EXPECT_EQ(got.cacheKeyHash, want.cacheKeyHash);
  EXPECT_EQ(got.key.hash(), want.key.hash());
  EXPECT_EQ(got.fullStatus(), want.fullStatus());
  EXPECT_EQ(got.errorText, want.errorText);
  EXPECT_EQ(got.medianMs, want.medianMs);
  EXPECT_EQ(got.gflops, want.gflops);
  EXPECT_EQ(got.cubin, want.cubin);
  EXPECT_EQ(got.measuredAt, want.measuredAt);
  EXPECT_EQ(got.runUid, want.runUid);
}

// A run on testGpu() with two ok rows at 4096³ (a blocktile1d and an smem configuration): the
// common start of the CLI tests' databases. Returns the run's id for more rows.
inline std::int64_t recordTwoOkRows(db::ResultStore& store) {
  auto run = store.beginRun(testRun());
  store.recordResult(run, okResult("blocktile1d_bm64_bn64_bk8_tm8", 4096, 4096, 4096, 17000));
  store.recordResult(run, okResult("smem_bs32", 4096, 4096, 4096, 9000));
  return run;
}

}  // namespace gemmtune::test
