// HeaderTrees: header libraries a template includes from outside templates/ (CUTLASS), found on
// this machine at run time. A tree's version, never its path, enters the source hash, so cache
// keys and stored rows move with the library's version and stay the same across machines.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gemmtune {

struct HeaderTree {
  std::string name;                      // "cutlass"
  std::string version;                   // "4.2.0", read from the headers themselves
  std::vector<std::string> includeDirs;  // NVRTC -I directories: the tree, then the CUDA toolkit's headers
  std::string identity() const { return name + " " + version; }
};

// The tree `name` as installed here, or why it cannot be used (one line that says what to do).
// Where "cutlass" is looked for, first found wins: $GEMMTUNE_CUTLASS_DIR (an include directory
// holding cutlass/version.h); <program>/../share/gemmtune/cutlass/include (installed); the build
// tree's deps/cutlass/include (scripts/fetch-deps.sh). Looked up once per process.
struct HeaderTreeLookup {
  std::optional<HeaderTree> tree;
  std::string missing;  // why not, when tree is empty
};
const HeaderTreeLookup& findHeaderTree(const std::string& name);

// The tree, or UnavailableError carrying the lookup's reason.
const HeaderTree& requireHeaderTree(const std::string& name);

// Why `family` cannot compile on this machine (a header tree it needs is missing), or nothing.
struct Family;
std::optional<std::string> unavailableReason(const Family& family);

// Parses "#define CUTLASS_MAJOR 4" ... from cutlass/version.h's text: "4.2.0", or empty.
std::string cutlassVersionFromHeader(const std::string& text);

}  // namespace gemmtune
