#include "SystemSnapshot.hpp"

#include <dlfcn.h>

#include <cstdlib>

// The installed snapshot relative to the installed library's directory, from the install layout
// (library/CMakeLists.txt); the default layout when built without it.
#ifndef GEMMTUNE_SYSTEM_DB_FROM_LIBDIR
#define GEMMTUNE_SYSTEM_DB_FROM_LIBDIR "../share/gemmtune/system.db"
#endif

namespace gemmtune::library {

namespace fs = std::filesystem;

fs::path installedSystemSnapshot(const fs::path& libraryDir) {
  return (libraryDir / GEMMTUNE_SYSTEM_DB_FROM_LIBDIR).lexically_normal();
}

fs::path thisLibraryDir() {
  Dl_info info{};
  if (!::dladdr(reinterpret_cast<void*>(&installedSystemSnapshot), &info) || !info.dli_fname) return {};
  std::error_code ec;
  fs::path object = fs::weakly_canonical(info.dli_fname, ec);
  // The main program reports its name as typed; /proc/self/exe is its real path.
  if (ec || !object.is_absolute()) object = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path{} : object.parent_path();
}

std::optional<std::string> systemSnapshotLocation(const char* env, const fs::path& libraryDir) {
  if (env) {  // named by the user, or turned off: never replaced by the installed one
    if (!*env) return std::nullopt;
    return std::string(env);
  }
  if (libraryDir.empty()) return std::nullopt;
  fs::path installed = installedSystemSnapshot(libraryDir);
  std::error_code ec;
  // Only when installed: a missing system snapshot is the normal case, not worth a warning.
  if (!fs::is_regular_file(installed, ec)) return std::nullopt;
  return installed.string();
}

std::optional<std::string> systemSnapshotLocation() {
  return systemSnapshotLocation(std::getenv("GEMMTUNE_SYSTEM_DB"), thisLibraryDir());
}

}  // namespace gemmtune::library
