#include "WorkerServer.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "CandidateKernel.hpp"
#include "Timer.hpp"
#include "Verifier.hpp"
#include "gemmtune/Errors.hpp"

namespace gemmtune {

WorkerServer::WorkerServer(int gpuIndex)
    : gpu_(gpuIndex),
      blas_(gpu_.stream()),
      kernels_(gpu_.info().arch, gpu_.stream(), gpu_.attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)),
      gate_(kernels_),
      clock_(gpu_.info().pciBusId),
      info_(gpu_.info()) {
  info_.cublasVersion = blas_.version();
}

const ProblemData& WorkerServer::data() const {
  if (!data_) throw UsageError("no problem set: send a problem before candidates or cuBLAS timings");
  return *data_;
}

void WorkerServer::setProblem(const Problem& p) {
  faithful_.reset();  // free the previous problem's buffers before allocating the next
  data_.reset();
  data_ = std::make_unique<ProblemData>(p, gpu_, kernels_, blas_);
  spdlog::debug("problem {} ready: {} rotation copies, integers in [-{}, {}]", p.shape().str(),
                data_->layout().rotationCopies, data_->layout().intRange, data_->layout().intRange);
}

const FaithfulData& WorkerServer::faithfulData() {
  if (!faithful_) {
    if (!accuracy_)
      accuracy_ = std::make_unique<AccuracyKernels>(info_.arch, gpu_.stream(), info_.smCount);
    faithful_ = std::make_unique<FaithfulData>(data().problem(), gpu_, kernels_, *accuracy_, blas_);
  }
  return *faithful_;
}

CandidateResult WorkerServer::refused(const std::string& what) const {
  if (CUresult h = gpu_.health(); h != CUDA_SUCCESS)
    throw CudaError(h, fmt::format("context unusable after: {}", what));
  CandidateResult r;
  r.status = kStatusLaunchError;
  r.detail = what;
  return r;
}

void WorkerServer::addTiming(CandidateResult& r, const TimingPolicy& policy, const std::function<void(int)>& launch) const {
  TimingResult t = timeLaunches(policy, gpu_.stream(), gate_, launch);
  gpu_.sync();
  r.medianMs = t.summary.medianMs;
  r.minMs = t.summary.minMs;
  r.spread = t.summary.spread;
  r.reps = t.summary.reps;
  r.partial = t.partial;
  r.smClockMHz = clock_.currentMHz();
}

CandidateResult WorkerServer::runCandidate(const CandidateRequest& req) {
  const ProblemData& d = data();
  std::unique_ptr<CandidateKernel> kernel;
  try {
    kernel = std::make_unique<CandidateKernel>(req.cubin, req.loweredNames, gpu_.device());
    kernel->admit(req.plan);
    // A layout the configuration refuses is skipped by the verifier; every other plan must launch.
    if (req.verify)
      for (const CheckLayout& l : req.checkLayouts)
        if (l.plan.runnable()) kernel->admit(l.plan);
  } catch (const LaunchRefused& e) {
    return refused(e.what());
  }
  CandidateResult r;
  std::string skipped, figures;
  try {
    if (req.verify) {
      Verdict v = verify(d, gpu_, kernels_, req.checkLayouts,
                         [&](const LaunchPlan& plan, const SgemmArgs& a) { kernel->launch(gpu_.stream(), plan, a); });
      // Nothing verified is no pass: without a check the result would be trusted blindly.
      if (v.checksRun == 0) return refused("no verification check could run: " + v.skipped);
      r.maxError = v.maxError;
      skipped = v.skipped;
      if (!v.ok) {
        r.status = kStatusWrongResult;
        r.detail = v.detail + (v.skipped.empty() ? "" : "; " + v.skipped);
        return r;
      }
      if (req.faithful) {
        const FaithfulData* faithful = nullptr;
        try {
          faithful = &faithfulData();
        } catch (const UsageError& e) {
          return refused(e.what());  // the data sets do not fit: this candidate unjudged, the run goes on
        }
        const FaithfulVerdict f =
            faithful->judge([&](const SgemmArgs& a) { kernel->launch(gpu_.stream(), req.plan, a); });
        if (!f.ok) {
          r.status = kStatusWrongResult;
          r.detail = f.detail;
          return r;
        }
        figures = f.summary();
      }
    }
    if (req.time)
      addTiming(r, req.timing, [&](int rep) { kernel->launch(gpu_.stream(), req.plan, d.timingArgs(rep)); });
  } catch (const LaunchRefused& e) {
    return refused(e.what());
  }
  r.status = kStatusOk;
  if (r.partial) r.detail = fmt::format("stopped after {} runs: slower than {:.3g} x best", r.reps, req.timing.earlyStopRatio);
  for (const std::string& note : {skipped, figures})
    if (!note.empty()) r.detail += (r.detail.empty() ? "" : "; ") + note;
  return r;
}

void WorkerServer::ltOrDefault(const CublasLtAlgo& algo, const SgemmArgs& args) {
  try {
    blas_.gemmLt(algo, args);
  } catch (const CublasError&) {
    if (CUresult h = gpu_.health(); h != CUDA_SUCCESS) throw;
    blas_.gemm(Cublas::Math::Default, args);
  } catch (const UnavailableError&) {  // no cuBLASLt on this machine: the library runs cuBLAS's own call too
    blas_.gemm(Cublas::Math::Default, args);
  }
}

CandidateResult WorkerServer::runCublas(const TimingPolicy& policy, bool verifyFirst, const CublasLtAlgo* algo) {
  const ProblemData& d = data();
  auto call = [&](const SgemmArgs& a) {
    if (algo)
      ltOrDefault(*algo, a);
    else
      blas_.gemm(Cublas::Math::Default, a);
  };
  CandidateResult r;
  r.status = kStatusOk;
  if (verifyFirst) {
    // cuBLAS as a candidate: the same checks in the same layouts as any configuration, against the
    // pedantic reference (its default math must agree with it exactly on small integers).
    try {
      const Verdict v = verifyEveryLayout(d, gpu_, kernels_, call);
      r.maxError = v.maxError;
      if (!v.ok) {
        r.status = kStatusWrongResult;
        r.detail = v.detail;
      }
    } catch (const CublasError& e) {
      // cuBLAS refused a verification layout (a status, not a fault): no row of it can be trusted.
      if (CUresult h = gpu_.health(); h != CUDA_SUCCESS) throw CudaError(h, e.what());
      r.status = kStatusLaunchError;
      r.detail = e.what();
    }
  }
  // The same problem the candidates are timed on: its layout, its batches (one strided call).
  // Timed even when wrong: the baseline's long warm-up brings the GPU to its boost clock.
  addTiming(r, policy, [&](int rep) { call(d.timingArgs(rep)); });
  if (r.detail.empty())
    r.detail = algo ? fmt::format("cuBLASLt {} (FP32 compute, no TF32)", algo->name())
                    : fmt::format("{} (default math, no TF32)", blas_.library());
  return r;
}

CublasLtPick WorkerServer::searchCublasLt(const TimingPolicy& policy) {
  const ProblemData& d = data();
  CublasLtPick pick;
  std::string why;
  const std::vector<CublasLtAlgo> algos = blas_.ltAlgorithms(d.timingArgs(0), kLtListLimit, why);
  pick.listed = static_cast<int>(algos.size());
  pick.result.status = kStatusLaunchError;
  pick.result.detail = algos.empty() ? (why.empty() ? "cuBLASLt lists no configuration for this problem" : why)
                                     : "no configuration of cuBLASLt passed verification";
  TimingPolicy screen;
  screen.warmupMs = 0;
  screen.minReps = screen.maxReps = 2;
  screen.budgetMs = 0;
  screen.bestSoFarMs = 0;
  std::vector<std::pair<double, std::size_t>> screened;
  double spentMs = 0;
  for (std::size_t i = 0; i < algos.size() && spentMs < CublasLtPick::kScreenMs; ++i) {
    try {  // once untimed: a configuration cuBLASLt refuses here is left out, never timed
      blas_.gemmLt(algos[i], d.timingArgs(0));
    } catch (const CublasError&) {
      if (CUresult h = gpu_.health(); h != CUDA_SUCCESS) throw;
      continue;
    }
    CandidateResult r;
    addTiming(r, screen, [&](int rep) { blas_.gemmLt(algos[i], d.timingArgs(rep)); });
    spentMs += r.medianMs * (r.reps + 2);
    screened.emplace_back(r.medianMs, i);
  }
  pick.screened = static_cast<int>(screened.size());
  std::stable_sort(screened.begin(), screened.end());
  std::vector<std::size_t> fastestFirst;
  for (const auto& [ms, i] : screened) fastestFirst.push_back(i);
  for (const std::size_t i : fastestDistinct(algos, fastestFirst, CublasLtPick::kFinalists)) {
    const CublasLtAlgo& algo = algos[i];
    CandidateResult r = runCublas(policy, true, &algo);
    if (r.status != kStatusOk) {
      spdlog::warn("cuBLASLt {}: {} ({})", algo.name(), r.status, r.detail);
      continue;
    }
    if (pick.algo.empty() || r.medianMs < pick.result.medianMs) {
      pick.result = r;
      pick.algo = algo.name();
    }
  }
  return pick;
}

CandidateResult WorkerServer::canary() {
  constexpr int M = 61, N = 67, K = 59;  // odd sizes: edge handling is exercised too
  constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
  DeviceBuffer A(4 * M * K), B(4 * K * N), C(4 * M * N), ref(4 * M * N);
  kernels_.fillInt(A.ptr(), M * K, 101, 8);
  kernels_.fillInt(B.ptr(), K * N, 102, 8);
  blas_.sgemm(Cublas::Math::Pedantic, M, N, K, 1.0f, A.ptr(), B.ptr(), 0.0f, ref.ptr());
  kernels_.fillConstant(C.ptr(), M * N, kNaN);
  kernels_.canarySgemm(M, N, K, 1.0f, A.ptr(), B.ptr(), 0.0f, C.ptr());
  gpu_.sync();
  // The reference doubles as the tolerance base: the check is exact anyway.
  CompareStats s = kernels_.compare(DeviceMatrix::packed(C.ptr(), M, N), ref.ptr(), ref.ptr(), 1.0f, true);
  CandidateResult r;
  r.status = s.bad == 0 ? kStatusOk : kStatusWrongResult;
  if (s.bad) r.detail = fmt::format("canary: {} of {} elements differ from cuBLAS", s.bad, M * N);
  return r;
}

}  // namespace gemmtune
