#include "RealCublas.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <mutex>

#include "DropinState.hpp"

namespace gemmtune::dropin {

namespace {

constexpr const char* kSonames[] = {"libcublas.so.13", "libcublas.so.12"};

// The drop-in's own load address: a symbol found there is ours, never the real cuBLAS.
const void* ownBase() {
  Dl_info info{};
  static const int anchor = 0;
  return dladdr(&anchor, &info) ? info.dli_fbase : nullptr;
}

bool isOwn(void* symbol) {
  Dl_info info{};
  return symbol && dladdr(symbol, &info) && info.dli_fbase == ownBase();
}

// The loaded object that defines `symbol`, opened again (no load) for the other entry points.
void* objectOf(void* symbol, std::string& path) {
  Dl_info info{};
  if (!symbol || isOwn(symbol) || !dladdr(symbol, &info) || !info.dli_fname) return nullptr;
  void* handle = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
  if (handle) path = info.dli_fname;
  return handle;
}

void* findLibrary(std::string& path, std::string& why) {
  if (const char* forced = std::getenv("GEMMTUNE_REAL_CUBLAS"); forced && *forced) {
    void* h = dlopen(forced, RTLD_NOW | RTLD_LOCAL);
    if (!h) why = fmt::format("GEMMTUNE_REAL_CUBLAS={} cannot be loaded ({})", forced, dlerror());
    if (h) path = forced;
    return h;
  }
  if (void* h = objectOf(dlsym(RTLD_NEXT, "cublasSgemm_v2"), path)) return h;
  // Loaded privately: the drop-in cannot tell whose handle a call carries when both majors are.
  void* loaded = nullptr;
  for (const char* soname : kSonames)
    if (void* h = dlopen(soname, RTLD_NOW | RTLD_NOLOAD)) {
      if (loaded) {
        state().warnings().once("two-cublas", fmt::format("gemmtune drop-in: {} and {} are both loaded and the "
                                                          "drop-in cannot tell whose handle a call carries; calls go "
                                                          "to {} (if the program's is the other, set "
                                                          "GEMMTUNE_REAL_CUBLAS to it or run without the drop-in)",
                                                          kSonames[0], kSonames[1], path));
        dlclose(h);
        break;
      }
      loaded = h, path = soname;
    }
  if (loaded) return loaded;
  for (const char* soname : kSonames)
    if (void* h = dlopen(soname, RTLD_NOW | RTLD_LOCAL)) return path = soname, h;
  why = "no cuBLAS found (libcublas.so.13 or .so.12): set GEMMTUNE_REAL_CUBLAS to the program's libcublas";
  return nullptr;
}

template <typename F>
void resolve(void* library, const char* name, F& into, std::string& missing) {
  void* symbol = dlsym(library, name);
  if (!symbol || isOwn(symbol)) {
    missing += missing.empty() ? name : fmt::format(", {}", name);
    return;
  }
  into = reinterpret_cast<F>(symbol);
}

RealCublas find() {
  RealCublas r;
  void* library = findLibrary(r.path, r.why);
  if (!library) return r;
  std::string missing;
  resolve(library, "cublasSgemm_v2", r.sgemm, missing);
  resolve(library, "cublasSgemmBatched", r.sgemmBatched, missing);
  resolve(library, "cublasSgemmStridedBatched", r.sgemmStridedBatched, missing);
  resolve(library, "cublasGemmEx", r.gemmEx, missing);
  resolve(library, "cublasGemmBatchedEx", r.gemmBatchedEx, missing);
  resolve(library, "cublasGemmStridedBatchedEx", r.gemmStridedBatchedEx, missing);
  resolve(library, "cublasGetStream_v2", r.getStream, missing);
  resolve(library, "cublasGetMathMode", r.getMathMode, missing);
  resolve(library, "cublasGetPointerMode_v2", r.getPointerMode, missing);
  if (!missing.empty()) r.why = fmt::format("{} lacks {}", r.path, missing);
  return r;
}

}  // namespace

bool RealCublas::complete() const {
  return sgemm && sgemmBatched && sgemmStridedBatched && gemmEx && gemmBatchedEx && gemmStridedBatchedEx &&
         getStream && getMathMode && getPointerMode;
}

const RealCublas& realCublas() {
  static const RealCublas* real = new RealCublas(find());  // never freed: used until the process ends
  return *real;
}

cublasStatus_t noRealCublas(const char* entry) {
  try {
    state().warnings().once(std::string("no-real-cublas|") + entry,
                            fmt::format("gemmtune drop-in: {} cannot be forwarded: {}", entry,
                                        realCublas().why.empty() ? "it is missing" : realCublas().why));
  } catch (...) {  // out of memory: the status still says it
  }
  return CUBLAS_STATUS_NOT_INITIALIZED;
}

}  // namespace gemmtune::dropin
