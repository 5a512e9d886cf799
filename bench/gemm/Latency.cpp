#include "PresentEnvironment.hpp"
#include "Latency.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <vector>

#include "CudaDriver.hpp"
#include "ResultStore.hpp"
#include "DeviceBuffer.hpp"
#include "FamilyRegistry.hpp"
#include "LoadedKernel.hpp"
#include "Workspace.hpp"
#include "LibraryColumn.hpp"
#include "Lookup.hpp"
#include "worker/HelperKernels.hpp"

namespace gemmtune::bench {

namespace {

using Clock = std::chrono::steady_clock;

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(p * static_cast<double>(v.size() - 1))];
}

double microsSince(Clock::time_point t) { return std::chrono::duration<double, std::micro>(Clock::now() - t).count(); }

template <class F>
std::vector<double> timeEach(int n, F&& f) {
  std::vector<double> us;
  us.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    auto t0 = Clock::now();
    f();
    us.push_back(microsSince(t0));
  }
  return us;
}

}  // namespace

DispatchFigures measureDispatch(LibraryColumn& library, int device, CUstream stream, const HelperKernels& helpers,
                                Compiler& compiler, const std::string& arch, const GemmShape& s) {
  const auto& cu = CudaDriver::get();
  DispatchFigures out;
  out.shape = s;
  out.instance = library.best(device, s).instance;

  DeviceBuffer A(static_cast<size_t>(s.M * s.K) * 4), B(static_cast<size_t>(s.K * s.N) * 4),
      C(static_cast<size_t>(s.M * s.N) * 4);
  helpers.fillNormal(A.ptr(), s.M * s.K, 1);
  helpers.fillNormal(B.ptr(), s.K * s.N, 2);
  SgemmArgs a{static_cast<int>(s.M), static_cast<int>(s.N), static_cast<int>(s.K), 1.0f, A.ptr(),
              static_cast<int>(s.K), B.ptr(), static_cast<int>(s.N), 0.0f, C.ptr(), static_cast<int>(s.N)};
  cu.check(cu.cuStreamSynchronize(stream), "cuStreamSynchronize");

  auto t0 = Clock::now();
  library.sgemm(stream, a);
  cu.check(cu.cuStreamSynchronize(stream), "cuStreamSynchronize");
  out.firstCallMs = microsSince(t0) / 1000;

  // The raw side: the same kernel, loaded once, launched with arguments packed once.
  Config config = FamilyRegistry::builtin().parseName(out.instance);
  CompileResult compiled = compiler.compile(config, arch);
  if (!compiled.ok) throw std::runtime_error(fmt::format("{} does not compile: {}", out.instance, compiled.log));
  LoadedKernel raw(compiled.cubin, compiled.loweredNames);
  const LaunchPlan plan = planLaunch(config, problemOf(a));
  if (!plan.runnable() || plan.launches.size() != 1)
    throw std::runtime_error(fmt::format("{}: the raw side times single-kernel plans only", out.instance));
  const KernelLaunch& l = plan.launches.front();
  Workspace workspace(cu);
  SgemmArgs rawArgs = a;
  cu.check(workspace.reserve(plan.workspaceBytes, stream, rawArgs.workspace), "workspace for the raw launch");
  ArgumentPack pack(l, rawArgs);
  // One launch through LoadedKernel::run first: it raises the function's dynamic shared-memory
  // limit where the plan needs more than 48 KB (tensor-core tiles do), which the raw loop relies on.
  cu.check(raw.run(plan, rawArgs, stream, &workspace), "the raw kernel's first launch");
  const Dim3 grid = raw.gridOf(l);  // a one-wave plan's grid as run() launches it

  // Batches short enough that the launch queue never fills (a full queue would make both sides
  // wait for the GPU), interleaved so that clock and cache effects hit both alike.
  constexpr int kBatches = 41, kPerBatch = 256;
  std::vector<double> rawUs, sgemmUs;
  for (int b = 0; b < kBatches; ++b) {
    auto r0 = Clock::now();
    for (int i = 0; i < kPerBatch; ++i)
      cu.check(cu.cuLaunchKernel(raw.function(), grid.x, grid.y, grid.z, l.block.x, l.block.y, l.block.z,
                                 static_cast<unsigned>(l.dynamicSmemBytes), stream, pack.pointers(), nullptr),
               "cuLaunchKernel");
    rawUs.push_back(microsSince(r0) / kPerBatch);
    cu.check(cu.cuStreamSynchronize(stream), "cuStreamSynchronize");
    auto s0 = Clock::now();
    for (int i = 0; i < kPerBatch; ++i) library.sgemm(stream, a);
    sgemmUs.push_back(microsSince(s0) / kPerBatch);
    cu.check(cu.cuStreamSynchronize(stream), "cuStreamSynchronize");
  }
  out.rawUs = percentile(rawUs, 0.5);
  out.sgemmUs = percentile(sgemmUs, 0.5);
  return out;
}

QueryFigures measureQueries(const std::filesystem::path& dbPath, const GpuSpec& gpu, const GemmShape& s,
                            LibraryColumn* library, int device) {
  QueryFigures out;
  const db::ProblemKey problem{s.M, s.N, s.K};
  // Source hashes are computed once per process, as a long-lived application would.
  auto present = serving::presentEnvironment();
  present.sourceHashOf(FamilyRegistry::builtin().libraryDefault().family->name);

  out.coldOpenP50Us = percentile(timeEach(21, [&] {
                                   auto store = db::openStore(dbPath.string(), {db::OpenMode::ReadOnly, db::OpenCheck::Header});
                                   serving::Lookup lookup(*store, present);
                                   lookup.best(gpu, problem);
                                 }),
                                 0.5);

  auto store = db::openStore(dbPath.string(), {db::OpenMode::ReadOnly, db::OpenCheck::Header});
  serving::Lookup lookup(*store, present);
  lookup.best(gpu, problem);
  auto warm = timeEach(100000, [&] { lookup.best(gpu, problem); });
  out.warmP50Us = percentile(warm, 0.5);
  out.warmP99Us = percentile(warm, 0.99);

  if (library) {
    library->best(device, s);
    out.libraryWarmP50Us = percentile(timeEach(100000, [&] { library->best(device, s); }), 0.5);
  }
  return out;
}

std::string formatLatency(const std::optional<DispatchFigures>& d, const std::optional<QueryFigures>& q) {
  std::string out;
  if (d)
    out += fmt::format(
        "\ndispatch at {} ({}), host time per call, median of batches:\n"
        "  raw cuLaunchKernel {:7.2f} us   sgemm() {:7.2f} us   overhead {:+.2f} us (target <= 2 us)\n"
        "  first sgemm() at this shape (choose + load + launch): {:.2f} ms\n",
        d->shape.str(), d->instance, d->rawUs, d->sgemmUs, d->sgemmUs - d->rawUs, d->firstCallMs);
  if (q) {
    out += fmt::format(
        "\nquery latency:\n"
        "  Lookup::best memoised   p50 {:8.3f} us   p99 {:8.3f} us\n"
        "  cold open + first best  p50 {:8.1f} us\n",
        q->warmP50Us, q->warmP99Us, q->coldOpenP50Us);
    if (q->libraryWarmP50Us) out += fmt::format("  Library::best memoised  p50 {:8.3f} us\n", *q->libraryWarmP50Us);
  }
  return out;
}

}  // namespace gemmtune::bench
