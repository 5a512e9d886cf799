#include "CublasRuntime.hpp"

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

bool CublasRuntime::sgemm(unsigned long long context, CUstream stream, const SgemmArgs& args, std::string& error) {
  std::lock_guard lock(mutex_);
  void* h = handleFor(context, stream, error);
  return h && lib_.rowMajorSgemm(h, args, error) == 0;
}

bool CublasRuntime::hasHandle(unsigned long long context, CUstream stream) {
  std::lock_guard lock(mutex_);
  auto it = handles_.find({context, stream});
  return it != handles_.end() && it->second;
}

}  // namespace gemmtune::library
