// DynamicLibrary: what CublasLibrary and CublasLtLibrary share in loading a library at run time:
// a symbol resolved into a typed function pointer, and the first of several sonames that loads
// with all its entry points.
#pragma once

#include <dlfcn.h>
#include <fmt/format.h>

#include <initializer_list>
#include <string>

namespace gemmtune {

// `fn` from `symbol` in `lib`; false with `missing` naming what lacks it and what is needed.
template <typename Fn>
bool resolveSymbol(void* lib, const char* symbol, Fn& fn, const char* name, const char* needed, std::string& missing) {
  fn = reinterpret_cast<Fn>(::dlsym(lib, symbol));
  if (!fn) missing = fmt::format("{} lacks {} ({} is needed)", name, symbol, needed);
  return fn != nullptr;
}

// The first of `names` that opens and whose entry points `resolveAll(lib, name, missing)` finds
// (null otherwise); `name` is set to it. `errors` collects each name's failure. Never closed: the
// libraries keep process-wide state.
template <typename Api, typename Resolve>
const Api* openFirst(std::initializer_list<const char*> names, Resolve resolveAll, const char*& name, std::string& errors) {
  for (const char* candidate : names) {
    void* lib = ::dlopen(candidate, RTLD_NOW | RTLD_LOCAL);
    std::string missing;
    const Api* api = lib ? resolveAll(lib, candidate, missing) : nullptr;
    if (api) {
      name = candidate;
      return api;
    }
    if (!lib) {
      const char* e = ::dlerror();
      missing = e ? e : candidate;
    }
    errors += fmt::format("{}{}", errors.empty() ? "" : "; ", missing);
  }
  return nullptr;
}

}  // namespace gemmtune
