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
  LtHandle& made = ltHandles_[{context, stream}];  // a failure is remembered: cuBLAS's own call from then on
  std::string why;
  const CublasLtLibrary* lt = CublasLtLibrary::get(why);
  if (!lt) return nullptr;
  try {
    made.workspace = DeviceBuffer(CublasLtLibrary::kWorkspaceBytes);
  } catch (const std::exception&) {
    return nullptr;
  }
  if (lt->create(made.handle, why) != 0) made.handle = nullptr;
  return made.handle ? &made : nullptr;
}

bool CublasRuntime::sgemm(unsigned long long context, CUstream stream, const SgemmArgs& args,
                          std::string_view instance, bool capturing, std::string& error) {
  std::lock_guard lock(mutex_);
  void* h = handleFor(context, stream, error);
  if (!h) return false;
  const std::string baseline = db::cublasInstance(args.layout.text());
  if (!capturing && instance.size() > baseline.size() + 1 && instance.starts_with(baseline + "_")) {
    const std::optional<CublasLtAlgo> algo = CublasLtAlgo::parse(instance.substr(baseline.size() + 1));
    std::string refused;
    std::string why;
    if (LtHandle* lt = algo ? ltHandleFor(context, stream) : nullptr;
        lt && CublasLtLibrary::get(why)->rowMajorMatmul(lt->handle, args, *algo, lt->workspace.ptr(), CublasLtLibrary::kWorkspaceBytes,
                                                        stream, refused) == 0)
      return true;
  }
  return lib_.rowMajorSgemm(h, args, error) == 0;
}

bool CublasRuntime::hasHandle(unsigned long long context, CUstream stream) {
  std::lock_guard lock(mutex_);
  auto it = handles_.find({context, stream});
  return it != handles_.end() && it->second;
}

}  // namespace gemmtune::library
