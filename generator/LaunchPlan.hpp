// LaunchPlan: how one configuration runs one problem — which kernels of its program, in what
// order, with what grid, block, dynamic shared memory and arguments, and how much workspace — or
// why it cannot run that problem ("float4 loads need lda % 4 == 0, got 1001"). Family specs make
// plans (Family::plan); nothing else derives a grid or an argument list. The tuner, the worker,
// the library, the lookup and the benchmarks all launch and check through a plan.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gemmtune {

struct Config;

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
  bool operator==(const Dim3&) const = default;
  unsigned long long volume() const { return static_cast<unsigned long long>(x) * y * z; }
};

// What a launch may depend on: the sizes, the leading dimensions, how the base pointers are
// aligned and whether beta is zero. Row-major C (M×N, ldc) = alpha·A (M×K, lda)·B (K×N, ldb) + beta·C.
struct GemmProblem {
  long long m = 0, n = 0, k = 0;
  long long lda = 0, ldb = 0, ldc = 0;
  int alignA = 16, alignB = 16, alignC = 16;  // bytes: the largest power of two (≤ 16) dividing the address
  bool betaZero = true;

  // Densely packed (lda = K, ldb = N, ldc = N), base pointers 16-byte aligned (as cuMemAlloc gives).
  static GemmProblem packed(long long m, long long n, long long k);
  static int alignmentOf(std::uintptr_t address);
  std::string text() const;  // "1000x1000x1000 lda 1003 ldb 1000 ldc 1000 A+4B"
};

// One argument of a kernel, named by meaning; bound to values at launch (device/LaunchArgs).
enum class KernelArg : std::uint8_t { M, N, K, Alpha, A, Lda, B, Ldb, Beta, C, Ldc, Workspace };

struct KernelLaunch {
  int kernel = 0;  // index into the configuration's kernels (Config::kernelExpressions()); 0 is the main one
  Dim3 grid, block;
  int dynamicSmemBytes = 0;
  std::vector<KernelArg> args;
};

struct LaunchPlan {
  std::string refusal;  // empty: runnable
  std::vector<KernelLaunch> launches;
  // Device memory the launches share (split-K locks), passed as KernelArg::Workspace. It is
  // zeroed before its first use, and every completed run of the plan leaves it zeroed again, so
  // runs in one stream reuse it (device/Workspace); runs that may overlap need their own.
  long long workspaceBytes = 0;

  bool runnable() const { return refusal.empty(); }
  static LaunchPlan refused(std::string why);
};

// The argument list of every template of the single-kernel contract:
// (int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb, float beta, float* C, int ldc).
const std::vector<KernelArg>& sgemmKernelArgs();

// What a single-kernel tiled family needs to say for its plan.
struct TiledGeometry {
  int tileM = 1, tileN = 1, tileK = 1;  // the unguarded form needs M % tileM == N % tileN == K % tileK == 0
  int vectorWidth = 1;                  // > 1: the unguarded form loads and stores that many floats at once
};

// Why no family can run `problem` (a dimension below 1, a leading dimension below its row
// length), or empty: the checks every plan starts with.
std::string malformedProblem(const GemmProblem& problem);

// The plan of a single-kernel template: grid (ceil(N / tileN), ceil(M / tileM)), the family's
// threads and dynamic shared memory, sgemmKernelArgs(). The unguarded form is refused where the
// tiles do not divide the problem, or the vector width does not divide the leading dimensions and
// the pointers' alignment; every form is refused where an operand with one tile of slack
// ((M + tileM)·lda, (K + tileK)·ldb, (M + tileM)·ldc) reaches 2^31 elements: templates form
// 32-bit offsets up to a tile past the last row or k step. The GPU's grid limits are checked with its other limits
// (device/LaunchLimits).
LaunchPlan tiledPlan(const Config& config, const GemmProblem& problem, const TiledGeometry& geometry);

// The plan of `config` (its family decides) for `problem`.
LaunchPlan planLaunch(const Config& config, const GemmProblem& problem);
// `config` in the form that runs `problem`: unguarded when that form's plan is runnable, else guarded.
Config formFor(Config config, const GemmProblem& problem);

}  // namespace gemmtune
