// gemmtune: command-line entry point. One App, one subcommand per file; errors become one line on
// stderr and a sysexits-style exit code (see include/gemmtune/Errors.hpp).
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <map>

#include "CliContext.hpp"
#include "GpuDetect.hpp"
#include "GpuSelect.hpp"
#include "Errors.hpp"

using namespace gemmtune;

namespace {

void setupLogging(int verbosity) {
  auto logger = spdlog::stderr_color_mt("gemmtune");
  logger->set_pattern("gemmtune: %^%l%$: %v");
  logger->set_level(verbosity > 0 ? spdlog::level::debug : verbosity < 0 ? spdlog::level::warn : spdlog::level::info);
  spdlog::set_default_logger(logger);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gemmtune: find the fastest SGEMM kernel configuration for your GPU and sizes.\n"
               "Kernel templates are instantiated per configuration, compiled with NVRTC, filtered by\n"
               "the GPU's limits, verified against cuBLAS, timed, and the best kept in SQLite.",
               "gemmtune"};
  app.require_subcommand(1);
  app.fallthrough();  // global options may follow the subcommand
  app.set_version_flag("--version", "gemmtune 0.1.0");

  cli::CliContext ctx;
  ctx.self = argv[0];
  for (int i = 0; i < argc; ++i) ctx.commandLine += (i ? " " : "") + std::string(argv[i]);
  bool verbose = false, quiet = false;
  app.add_flag("-v,--verbose", verbose, "Log debug details to stderr");
  app.add_flag("-q,--quiet", quiet, "Log only warnings and errors");
  app.add_option("--templates-dir", ctx.templatesDir, "Read kernel templates from DIR instead of the embedded copies")
      ->check(CLI::ExistingDirectory)->type_name("DIR");
  app.add_option("--cache-dir", ctx.cacheDir, "Compile cache directory (default $XDG_CACHE_HOME/gemmtune)")
      ->type_name("DIR");
  app.add_flag("--no-cache", ctx.noCache, "Do not read or write the compile cache");
  app.add_option("-j,--jobs", ctx.jobs, "Parallel NVRTC compiles (default: hardware threads)")
      ->check(CLI::Range(1, 1024));

  std::map<CLI::App*, cli::Action> actions;
  auto reg = [&](cli::Action (*add)(CLI::App&, cli::CliContext&)) {
    size_t before = app.get_subcommands({}).size();
    cli::Action a = add(app, ctx);
    actions[app.get_subcommands({}).at(before)] = std::move(a);
  };
  reg(cli::addTuneCommand);
  reg(cli::addPtxCommand);
  reg(cli::addQueryCommand);
  reg(cli::addResultsCommand);
  reg(cli::addExportCommand);
  reg(cli::addImportCommand);
  reg(cli::addDbCommand);
  reg(cli::addSpaceCommand);
  reg(cli::addGpusCommand);
  reg(cli::addReportCommand);
  reg(cli::addWorkerCommand);

  // CLI11 would report an unknown command as "a subcommand is required"; name it instead.
  auto isCommand = [&](const char* word) {
    for (auto* sub : app.get_subcommands({}))
      if (sub->check_name(word)) return true;
    return false;
  };
  if (argc > 1 && argv[1][0] != '-' && !isCommand(argv[1])) {
    std::string names;
    for (auto* sub : app.get_subcommands({}))
      if (!sub->get_group().empty()) names += (names.empty() ? "" : ", ") + sub->get_name();
    std::fprintf(stderr, "gemmtune: error: unknown command '%s' (choose from: %s)\n", argv[1], names.c_str());
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "gemmtune: error: %s (see gemmtune --help)\n", e.what());
    return kExitUsage;
  }

  setupLogging(verbose ? 1 : quiet ? -1 : 0);
  serving::setAutoGpuDetector([] { return resolveGpu("auto"); });
  try {
    for (auto* sub : app.get_subcommands())
      if (auto it = actions.find(sub); it != actions.end()) return it->second();
    return kExitUsage;
  } catch (const Error& e) {
    spdlog::error("{}", e.what());
    return exitCodeOf(e);
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return kExitFailure;
  }
}
