// LaunchPlan: how one configuration runs one problem — which kernels of its program, in what
// order, with what grid, block, dynamic shared memory and arguments, and how much workspace — or
// why it cannot run that problem ("float4 loads need lda % 4 == 0, got 1001"). The vocabulary
// only: family specs make plans (generator/FamilyPlans.hpp), the device layer binds and launches
// them (device/LaunchArgs, device/LoadedKernel), and nothing else derives a grid or an argument
// list. The tuner, the worker, the library, the lookup and the benchmarks all launch and check
// through a plan.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "GemmProblem.hpp"

namespace gemmtune {

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
  bool operator==(const Dim3&) const = default;
  unsigned long long volume() const { return static_cast<unsigned long long>(x) * y * z; }
};

// One argument of a kernel, named by meaning; bound to values at launch (device/LaunchArgs).
// Batch is one struct (templates/batch.cuh, device/LaunchArgs.hpp's BatchArg): the batch
// strides, the pointer arrays (null when strided) and the batch count.
enum class KernelArg : std::uint8_t { M, N, K, Alpha, A, Lda, B, Ldb, Beta, C, Ldc, Batch, Workspace };

struct KernelLaunch {
  int kernel = 0;  // index into the configuration's kernels (Config::kernelExpressions()); 0 is the main one
  Dim3 grid, block;
  int dynamicSmemBytes = 0;
  std::vector<KernelArg> args;
  // One wave (streamk): grid.x is the most blocks the kernel can use; the device layer launches
  // min(grid.x, SMs × the blocks an SM holds) of them (oneWaveBlocks), all resident at once, and
  // the kernel divides all tiles' k steps evenly over gridDim.x blocks (grid y and z are 1).
  bool oneWave = false;
};

// The blocks a one-wave launch of at most `planned` blocks runs on `smCount` SMs holding
// `blocksPerSm` each (the planned count where either is unknown, 0).
long long oneWaveBlocks(long long planned, int smCount, int blocksPerSm);

// Plans that need the workspace zeroed (split-K locks and counters) use at most its first
// kZeroedWorkspaceBytes, and leave them zeroed; beyond them lies scratch (templates/fp16x3_passes.cuh).
inline constexpr long long kZeroedWorkspaceBytes = 64LL << 20;

// Grid y and z hold at most this many blocks on every GPU gemmtune runs on (x: 2^31 - 1). Plans
// refuse what exceeds it; device/LaunchLimits checks the GPU's own limits too.
inline constexpr long long kMaxGridYZ = 65535;

struct LaunchPlan {
  std::string refusal;  // empty: runnable
  std::vector<KernelLaunch> launches;
  // Device memory the launches share (split-K locks), passed as KernelArg::Workspace. It is
  // zeroed before its first use, and every completed run of the plan leaves it zeroed again, so
  // runs in one stream reuse it (device/Workspace); runs that may overlap need their own.
  long long workspaceBytes = 0;
  // (Past kZeroedWorkspaceBytes the workspace is scratch: a plan may leave anything there, and only
  // plans that write before they read use it.)
  // What a model of the launch reads (model/FamilyModel) and serving's slice rules: the C tile one
  // block computes, the depth of one step of its k loop, and the K slices the grid holds (split-K).
  // Said by the family's plan, never guessed from names; 0: not said.
  int tileM = 0, tileN = 0, tileK = 0, kSlices = 1;
  // The K slices' partial tiles are summed on the chip (clusterk: distributed shared memory), so
  // the reduction moves no bytes through DRAM or L2 beyond C.
  bool slicesSummedOnChip = false;

  bool runnable() const { return refusal.empty(); }
  // The launch of the family's main kernel (kernel 0): the grid a model, a filter or a report
  // means. Launches run in vector order, so it need not be the first (fp16x3's is the seventh).
  // A runnable plan has one.
  const KernelLaunch& mainLaunch() const;
  static LaunchPlan refused(std::string why);
};

// The argument list of every template of the single-kernel contract:
// (int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb, float beta, float* C, int ldc,
//  GemmtuneBatch batch); templates that split K take a workspace pointer after it.
const std::vector<KernelArg>& sgemmKernelArgs();

}  // namespace gemmtune
