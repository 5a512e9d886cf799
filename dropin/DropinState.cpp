#include "DropinState.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <unistd.h>

#include "DeviceSpecs.hpp"
#include "GpuDetect.hpp"
#include "SeenRecorder.hpp"

namespace gemmtune::dropin {

namespace {

// The GPU of the calling thread's current context; an empty spec when there is none.
GpuSpec currentGpu() {
  try {
    return library::DeviceSpecs().get(currentContextOrdinal());
  } catch (const std::exception&) {  // no driver, GPU or context: the nominal estimate
    return {};
  }
}

// One call's estimated ms: the roofline of the GPU the first recorded call ran on.
double estimateMs(const GemmShape& shape) {
  static const GpuSpec gpu = currentGpu();
  return library::estimatedCallMs(0, 0, gpu, shape);
}

void atExit() {
  DropinState& s = state();
  if (CallRecorder* r = s.recorder()) r->flush();
  const char* report = std::getenv("GEMMTUNE_CUBLAS_REPORT");
  if (report && std::strcmp(report, "0") == 0) return;
  if (s.counts.calls.load() == 0 || !s.inOwnerProcess()) return;
  try {
    std::fprintf(stderr, "%s\n", s.summary().c_str());
  } catch (...) {
  }
}

}  // namespace

DropinState::DropinState() : ownerPid_(::getpid()) {
  std::string warning;
  policy_ = policyFrom(std::getenv("GEMMTUNE_CUBLAS"), warning);
  if (!warning.empty()) warnings_.once("policy", "gemmtune drop-in: " + warning);
  std::string precisionWarning;
  precision_ = precisionFrom(std::getenv("GEMMTUNE_PRECISION"), precisionWarning);
  if (!precisionWarning.empty()) warnings_.once("precision", "gemmtune drop-in: " + precisionWarning);
  if (policy_ != Policy::off) {
    Library::Options options;
    options.precision = precision_;
    options.recordSeen = false;  // the drop-in records through GEMMTUNE_RECORD
    options.measuredWinsOnly = policy_ == Policy::measured;
    try {
      library_ = std::make_unique<Library>(options);
    } catch (const std::exception& e) {
      warnings_.once("library", fmt::format("gemmtune drop-in: cannot start ({}); every call goes to cuBLAS", e.what()));
    }
  }
  if (const char* path = std::getenv("GEMMTUNE_RECORD"); path && *path)
    recorder_ = std::make_unique<CallRecorder>(path, estimateMs, warnings_);
}

bool DropinState::inOwnerProcess() const { return ::getpid() == ownerPid_; }

std::string DropinState::summary() const {
  const long long calls = counts.calls.load(), served = counts.served.load();
  std::string out = fmt::format("gemmtune drop-in (GEMMTUNE_CUBLAS={}): {} FP32 GEMM calls, {} served by gemmtune, {} "
                                "forwarded to cuBLAS",
                                toString(policy_), calls, served, calls - served);
  std::string why;
  auto part = [&](long long n, const char* what) {
    if (n > 0) why += fmt::format("{}{} {}", why.empty() ? "" : ", ", n, what);
  };
  part(counts.declined.load(), policy_ == Policy::measured ? "without a measured win" : "declined");
  part(counts.leftToCublas.load(), "left to cuBLAS by their settings (TF32 math, device scalars, alpha 0, ...)");
  part(counts.failed.load(), "that gemmtune could not run");
  if (!why.empty()) out += " (" + why + ")";
  if (recorder_) out += fmt::format("; recorded in {}", recorder_->path());
  return out;
}

DropinState& state() {
  static DropinState* s = [] {
    auto* made = new DropinState();  // never freed: see the header
    std::atexit(atExit);
    return made;
  }();
  return *s;
}

}  // namespace gemmtune::dropin
