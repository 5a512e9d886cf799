// Dispatcher: sgemm() calls to kernel launches. The first call for a (CUDA context, launch
// shape: sizes, layout, leading dimensions, batch, alignment, beta class) plans the configuration
// and loads its kernel into that context (modules belong to one context); the prepared launch is
// then kept, so a repeated call costs two driver queries for the current context, a hash lookup
// under a shared lock, and cuLaunchKernel. A plan answered by cuBLAS's row runs the whole call as one
// cuBLAS call (CublasRuntime); where cuBLAS cannot be loaded, the best gemmtune kernel runs instead
// (one warning).
#pragma once

#include <cuda.h>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "CudaDriver.hpp"
#include "DeviceSpecs.hpp"
#include "KernelLoader.hpp"
#include "GemmCall.hpp"
#include "Planner.hpp"
#include "SeenRecorder.hpp"
#include "Warnings.hpp"
#include "Workspace.hpp"
#include "gemmtune/Library.hpp"

namespace gemmtune::library {

class Dispatcher {
 public:
  // `seen`: where calls served without an exact row are counted (null: nowhere).
  // `measuredWinsOnly`: Library::Options::measuredWinsOnly (other shapes are declined).
  Dispatcher(Planner& planner, DeviceSpecs& specs, Warnings& warnings, SeenRecorder* seen = nullptr,
             bool measuredWinsOnly = false);
  ~Dispatcher();

  // A row-major call (asRowMajor), already validated. `error` is set for every status but ok.
  Status sgemm(CUstream stream, const GemmCall& call, std::string& error) noexcept;

  // Batches per launch at most: with a kernel's K slices (64 at most) they share grid z.
  static constexpr long long kBatchesPerLaunch = kMaxGridYZ / 64;
  static_assert(kBatchesPerLaunch == Library::kBatchesPerLaunch, "the public header says how many");

 private:
  // Everything a launch plan depends on: sizes, layout, leading dimensions, batch count and form,
  // pointer alignment (strides matter only through it), beta class.
  struct ShapeKey {
    unsigned long long context = 0;  // cuCtxGetId: unique for the process, unlike a CUcontext address
    int m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
    Layout layout{};
    int batch = 1;              // this launch's batches (its plan's grid z)
    long long callBatch = 1;    // the call's: what the tuned rows are looked up by
    bool pointerArrays = false;
    unsigned char alignA = 16, alignB = 16, alignC = 16;
    bool betaZero = true;
    bool operator==(const ShapeKey&) const = default;
    GemmProblem problem() const;
  };
  struct ShapeKeyHash {
    std::size_t operator()(const ShapeKey& key) const noexcept;
  };
  struct Launch {
    bool cublas = false;  // the plan is cuBLAS's (loaded): the whole call is one cuBLAS call
    const LoadedKernel* kernel = nullptr;
    LaunchPlan plan;
    std::string instance;
    std::string error;  // set: nothing can run this shape here (said once; the call fails fast)
    std::string declined;  // set: the shape is left to the caller (Status::declined), this says why
    SeenCounter* seen = nullptr;  // counts the calls when the plan is not an exact row
  };
  struct Attempt {
    Config config;
    bool stored = false;  // the row's binary rather than NVRTC
  };

  const CudaDriver* driver() noexcept;
  // The current context's id, or a Status other than ok with `error` set.
  Status currentContext(unsigned long long& id, std::string& error);
  // The prepared launch of `args` (at most kBatchesPerLaunch batches of a call of `callBatch`).
  // A shape not prepared yet is declined while `stream` captures a graph (preparing would allocate).
  const Launch& launchFor(unsigned long long context, const SgemmArgs& args, long long callBatch, CUstream stream);
  // Whether `stream` is capturing a CUDA graph (or may not be used outside one: the legacy stream
  // while another captures). Asked only before work that a capture forbids.
  bool capturing(CUstream stream);
  Status run(const Launch& launch, CUstream stream, unsigned long long context, const SgemmArgs& args,
             std::string& error);
  // The whole row-major `call`, every batch, through cuBLAS (CublasRuntime).
  // `instance`: the plan's row (cuBLAS's own call, or one of cuBLASLt's configurations).
  Status runCublas(CUstream stream, unsigned long long context, const GemmCall& call, const std::string& instance,
                   std::string& error);
  const Launch& prepared(const ShapeKey& key);
  Launch prepare(const ShapeKey& key);
  // Loads the first of `attempts` that can run `problem` into `launch`, else sets its error.
  void loadFirst(Launch& launch, const std::vector<Attempt>& attempts, unsigned long long context,
                 const GemmProblem& problem, const Plan& plan, const GpuSpec& gpu);
  // The workspace of launches on `stream` of `context` (split-K locks): one per stream, since
  // launches of one stream run in order and those of different streams may overlap.
  Workspace& workspaceOf(unsigned long long context, CUstream stream);
  const LoadedKernel* module(unsigned long long context, const Attempt& attempt, const LaunchPlan& launchPlan,
                             const Plan& plan, const GpuSpec& gpu, std::string& why);

  Planner& planner_;
  DeviceSpecs& specs_;
  Warnings& warnings_;
  SeenRecorder* seen_;
  const bool measuredWinsOnly_;

  std::once_flag driverOnce_;
  // A copy: modules are unloaded through it even after the process-wide driver object is gone.
  std::optional<CudaDriver> driver_;
  std::string noDriver_;
  std::unique_ptr<KernelLoader> loader_;

  std::shared_mutex launchesMutex_;
  std::unordered_map<ShapeKey, Launch, ShapeKeyHash> launches_;  // entries are never erased

  std::mutex prepareMutex_;  // new shapes are prepared one at a time; known shapes never wait on it
  using ModuleKey = std::pair<unsigned long long, std::string>;  // (context, instance)
  std::map<ModuleKey, std::unique_ptr<LoadedKernel>> modules_;
  std::map<ModuleKey, std::string> failed_;  // (context, instance + source) -> why

  std::mutex workspacesMutex_;
  std::map<std::pair<unsigned long long, CUstream>, std::unique_ptr<Workspace>> workspaces_;
};

}  // namespace gemmtune::library
