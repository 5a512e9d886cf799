// `gemmtune compile-unit REQUEST` (hidden): one NVRTC compile in a process of its own, started by
// the compiler of `tune`, `space` and `ptx` (generator/CompileChild.hpp); people never run it.
#include "CliContext.hpp"
#include "CompileChild.hpp"

namespace gemmtune::cli {

Action addCompileUnitCommand(CLI::App& app, CliContext&) {
  auto* sub = app.add_subcommand("compile-unit", "One NVRTC compile (started by the tuner's compiler)");
  sub->group("");  // hidden from --help
  auto files = std::make_shared<std::pair<std::string, std::string>>();
  sub->add_option("request", files->first, "Request file written by the parent")->required();
  sub->add_option("error", files->second, "Where to write why the compile could not be stored")->required();
  return [files] { return runCompileChild(files->first, files->second); };
}

}  // namespace gemmtune::cli
