#include "NvrtcLibrary.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>

#include "gemmtune/Errors.hpp"
#include "Quote.hpp"

// Where the pinned copy lands, relative to the installed program's and library's directories
// (cmake/PinnedDeps.cmake derives them from the install layout).
#ifndef GEMMTUNE_NVRTC_FROM_BINDIR
#define GEMMTUNE_NVRTC_FROM_BINDIR "../lib/gemmtune/nvrtc"
#endif
#ifndef GEMMTUNE_NVRTC_FROM_LIBDIR
#define GEMMTUNE_NVRTC_FROM_LIBDIR "gemmtune/nvrtc"
#endif

namespace gemmtune {

namespace fs = std::filesystem;

namespace {

constexpr const char* kPinnedFile = "libnvrtc.so.13";

// The directory of the running program and of the object (program or shared library) holding
// this function; either may hold an installed gemmtune's pinned NVRTC.
std::vector<fs::path> installedCandidates() {
  std::vector<fs::path> out;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) out.push_back((exe.parent_path() / GEMMTUNE_NVRTC_FROM_BINDIR / kPinnedFile).lexically_normal());
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&installedCandidates), &info) && info.dli_fname &&
      fs::path(info.dli_fname).is_absolute()) {
    fs::path object = fs::weakly_canonical(info.dli_fname, ec);
    if (!ec && object != exe)
      out.push_back((object.parent_path() / GEMMTUNE_NVRTC_FROM_LIBDIR / kPinnedFile).lexically_normal());
  }
  return out;
}

// What the dynamic linker says about the last failure.
std::string dlFailure() {
  const char* e = ::dlerror();
  return e ? e : "unknown dlopen error";
}

}  // namespace

std::optional<int> NvrtcLibrary::installedDriverVersion() {
  // cuDriverGetVersion needs no cuInit; the handle stays open (the device layer loads it anyway).
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!cuda) return std::nullopt;
  using GetVersion = int (*)(int*);
  auto get = reinterpret_cast<GetVersion>(dlsym(cuda, "cuDriverGetVersion"));
  int version = 0;
  if (!get || get(&version) != 0 || version <= 0) return std::nullopt;
  return version;
}

std::vector<NvrtcCandidate> NvrtcLibrary::searchOrder(const char* env, std::optional<int> driverVersion) {
  if (env && *env) return {{env, "GEMMTUNE_NVRTC", true}};
  std::vector<NvrtcCandidate> out;
  auto add = [&](const fs::path& path, const char* origin) {
    for (const auto& c : out)
      if (c.path == path.string()) return;
    out.push_back({path.string(), origin, false});
  };
  const bool driverTakesPinned = !driverVersion || *driverVersion >= kPinnedMajor * 1000;
  if (driverTakesPinned) {
    for (const auto& p : installedCandidates()) add(p, "installed");
#ifdef GEMMTUNE_BUILD_DEPS_DIR
    add(fs::path(GEMMTUNE_BUILD_DEPS_DIR) / "nvrtc" / "lib" / kPinnedFile, "build tree");
#endif
  }
  add("libnvrtc.so.13", "toolkit");
  add("libnvrtc.so.12", "toolkit");
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* root = std::getenv(var); root && *root)
      for (const char* so : {"libnvrtc.so.13", "libnvrtc.so.12"}) add(fs::path(root) / "lib64" / so, "toolkit");
  for (const char* so : {"libnvrtc.so.13", "libnvrtc.so.12"}) add(fs::path("/usr/local/cuda/lib64") / so, "toolkit");
  return out;
}

NvrtcLibrary NvrtcLibrary::load(const std::vector<NvrtcCandidate>& candidates) {
  auto start = std::chrono::steady_clock::now();
  std::vector<std::string> tried;
  for (const auto& c : candidates) {
    // A missing file is the usual case for the pinned places: not worth a word in the error.
    std::error_code ec;
    if (!c.required && fs::path(c.path).is_absolute() && !fs::exists(c.path, ec)) continue;
    std::optional<std::string> failure;
    ::dlerror();
    void* handle = ::dlopen(c.path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) failure = dlFailure();
    NvrtcLibrary lib;
    if (!failure) {
#define GEMMTUNE_RESOLVE(name)                                                     \
  if (!failure) {                                                                  \
    lib.name = reinterpret_cast<decltype(lib.name)>(::dlsym(handle, #name));       \
    if (!lib.name) failure = fmt::format("not an NVRTC library: {} missing", #name); \
  }
      GEMMTUNE_NVRTC_FUNCTIONS(GEMMTUNE_RESOLVE)
#undef GEMMTUNE_RESOLVE
    }
    if (!failure && lib.nvrtcVersion(&lib.major_, &lib.minor_) != NVRTC_SUCCESS) failure = "nvrtcVersion failed";
    if (failure) {
      // The handle (if any) stays open: closing a half-initialised NVRTC gains nothing.
      if (c.required)
        throw UnavailableError(fmt::format("{}={} cannot be loaded ({}): point it at a libnvrtc.so.* or unset it",
                                           c.origin, quoteInput(c.path), escapedControls(*failure)));
      spdlog::debug("NVRTC candidate {} ({}) not used: {}", c.path, c.origin, *failure);
      tried.push_back(fmt::format("{}: {}", c.path, *failure));
      continue;
    }
    Dl_info info{};
    lib.path_ = ::dladdr(reinterpret_cast<void*>(lib.nvrtcVersion), &info) && info.dli_fname ? info.dli_fname : c.path;
    lib.origin_ = c.origin;
    // NVRTC opens libnvrtc-builtins.so.MAJOR.MINOR by name when it first compiles. The pinned
    // copy finds the one beside it through its RPATH ($ORIGIN); loading it here by full path
    // makes that hold for any copy (the dynamic linker then matches the name to it).
    fs::path builtins = fs::path(lib.path_).parent_path() / fmt::format("libnvrtc-builtins.so.{}.{}", lib.major_, lib.minor_);
    if (fs::exists(builtins, ec) && !::dlopen(builtins.c_str(), RTLD_NOW | RTLD_LOCAL))
      spdlog::debug("{} not preloaded: {}", builtins.string(), dlFailure());
    spdlog::debug("NVRTC {} from {} ({}), loaded in {:.0f} ms", lib.version(), lib.path_, lib.origin_,
                  std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    return lib;
  }
  std::string list;
  for (const auto& t : tried) list += (list.empty() ? "" : "; ") + t;
  throw UnavailableError(fmt::format("no NVRTC found{}: run scripts/build.sh (it fetches the pinned NVRTC {}.{}), "
                                     "install the CUDA toolkit (12 or newer) or set GEMMTUNE_NVRTC to a libnvrtc.so.*",
                                     list.empty() ? "" : " (" + escapedControls(list) + ")", kPinnedMajor, kPinnedMinor));
}

const NvrtcLibrary& NvrtcLibrary::get() {
  struct Loaded {
    std::optional<NvrtcLibrary> lib;
    std::string error;
  };
  static const Loaded loaded = [] {
    Loaded l;
    try {
      l.lib = load(searchOrder(std::getenv("GEMMTUNE_NVRTC")));
    } catch (const std::exception& e) {
      l.error = e.what();
    }
    return l;
  }();
  if (!loaded.lib) throw UnavailableError(loaded.error);
  return *loaded.lib;
}

std::string NvrtcLibrary::version() const { return fmt::format("{}.{}", major_, minor_); }

bool NvrtcLibrary::pinned() const { return major_ > kPinnedMajor || (major_ == kPinnedMajor && minor_ >= kPinnedMinor); }

std::string NvrtcLibrary::describe() const {
  std::string s = fmt::format("NVRTC {} from {} ({})", version(), path_, origin_);
  if (pinned()) return s;
  s += fmt::format(": older than the pinned {}.{}; kernels may run up to 14 % slower (64-bit shared-memory addressing). ",
                   kPinnedMajor, kPinnedMinor);
  const std::optional<int> driver = installedDriverVersion();
  if (driver && *driver < kPinnedMajor * 1000)
    return s + fmt::format("The pinned one needs a CUDA {} driver; this one is {}.{}.", kPinnedMajor, *driver / 1000,
                           (*driver % 1000) / 10);
  return s + "Run scripts/build.sh to fetch it, or set GEMMTUNE_NVRTC.";
}

std::string NvrtcLibrary::describeInUse() {
  try {
    return get().describe();
  } catch (const std::exception& e) {
    return fmt::format("NVRTC: none ({})", e.what());
  }
}

void NvrtcLibrary::warnIfOlderThanPinned() const {
  if (pinned()) return;
  static std::once_flag once;
  std::call_once(once, [this] {
    // The program's logger (stderr) when it has one, as the CLI and gemmtune::Library do.
    auto logger = spdlog::get("gemmtune");
    (logger ? logger : spdlog::default_logger())->warn(describe());
  });
}

}  // namespace gemmtune
