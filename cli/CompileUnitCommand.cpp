// `gemmtune compile-unit REQUEST` (hidden): one NVRTC compile in a process of its own, started by
// the compiler of `tune`, `space` and `ptx` (generator/CompileChild.hpp); people never run it.
#include "CliContext.hpp"
#include "CompileChild.hpp"

namespace gemmtune::cli {

Action addCompileUnitCommand(CLI::App& app, CliContext&) {
  auto* sub = app.add_subcommand("compile-unit", "One NVRTC compile (started by the tuner's compiler)");
  sub->group("");  // hidden from --help
  auto request = std::make_shared<std::string>();
  sub->add_option("request", *request, "Request file written by the parent")->required();
  return [request] { return runCompileChild(*request); };
}

}  // namespace gemmtune::cli
