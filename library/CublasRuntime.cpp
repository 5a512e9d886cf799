#include "CublasRuntime.hpp"

#include <optional>

#include "ResultStore.hpp"

namespace gemmtune::library {

CublasRuntime* CublasRuntime::get(std::string& why) {
  // One for the process: every Library shares it, and it outlives them all (a handle destroyed
  // after its context would be undefined; the process's end releases everything).
  static CublasRuntime* runtime = [] {
    std::string ignored;  // said by CublasLibrary::get below, every time
    const CublasLibrary* lib = CublasLibrary::get(ignored);
    return lib ? new CublasRuntime(*lib) : nullptr;
  }();
  if (!runtime) CublasLibrary::get(why);
  return runtime;
}

void* CublasRuntime::handleFor(unsigned long long context, CUstream stream, std::string& error) {
  auto& h = handles_[{context, stream}];
  if (h) return h;
  void* made = nullptr;
  if (lib_.create(made, error) != 0) {
    handles_.erase({context, stream});
    return nullptr;
  }
  if (lib_.setStream(made, stream, error) != 0) {
    lib_.destroy(made);
    handles_.erase({context, stream});
    return nullptr;
  }
  h = made;
  return h;
}

CublasRuntime::LtHandle* CublasRuntime::ltHandleFor(unsigned long long context, CUstream stream) {
  auto it = ltHandles_.find({context, stream});
  if (it != ltHandles_.end()) return it->second.handle ? &it->second : nullptr;
  std::string why;
  const CublasLtLibrary* lt = CublasLtLibrary::get(why);
  if (!lt) {
    ltHandles_[{context, stream}];  // remembered: cuBLAS's own call from then on
    return nullptr;
  }
  LtHandle made;
  try {
    made.workspace = DeviceBuffer(CublasLtLibrary::kWorkspaceBytes);
  } catch (const std::exception&) {
    return nullptr;  // out of memory now: cuBLAS's own call this time, another try next time
  }
  if (lt->create(made.handle, why) != 0) {
    ltHandles_[{context, stream}];  // remembered, as a missing cuBLASLt: no allocation on every call
    return nullptr;
  }
  LtHandle& kept = ltHandles_[{context, stream}];
  kept = std::move(made);
  return &kept;
}

std::optional<CublasLtAlgo> CublasRuntime::ltAlgoOf(std::string_view instance, const Layout& layout) {
  const std::string_view algo = db::cublasLtAlgoOf(instance, layout.text());
  if (algo.empty()) return std::nullopt;
  return CublasLtAlgo::parse(algo);
}

bool CublasRuntime::sgemm(unsigned long long context, CUstream stream, const SgemmArgs& args,
                          std::string_view instance, bool capturing, std::string& error) {
  std::lock_guard lock(mutex_);
  void* h = handleFor(context, stream, error);
  if (!h) return false;
  if (const std::optional<CublasLtAlgo> algo = capturing ? std::nullopt : ltAlgoOf(instance, args.layout)) {
    std::string refused, why;
    // Refused (a status, nothing enqueued): these operands' alignment or leading dimensions do not
    // suit the configuration; cuBLAS's own call computes the same product.
    if (LtHandle* lt = ltHandleFor(context, stream);
        lt && CublasLtLibrary::get(why)->rowMajorMatmul(lt->handle, args, *algo, lt->workspace.ptr(),
                                                        CublasLtLibrary::kWorkspaceBytes, stream, refused) == 0)
      return true;
  }
  return lib_.rowMajorSgemm(h, args, error) == 0;
}

bool CublasRuntime::hasHandle(unsigned long long context, CUstream stream, bool lt) {
  std::lock_guard lock(mutex_);
  auto it = handles_.find({context, stream});
  if (it == handles_.end() || !it->second) return false;
  return !lt || ltHandles_.count({context, stream}) > 0;
}

}  // namespace gemmtune::library
