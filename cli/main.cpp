// gemmtune: command-line entry point. One App, one subcommand per file; errors become one line on
// stderr and a sysexits-style exit code (base/ExitCodes.hpp; the exception types are
// include/gemmtune/Errors.hpp).
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <optional>
#include <system_error>

#include "CliContext.hpp"
#include "GpuDetect.hpp"
#include "GpuSelect.hpp"
#include "NvrtcLibrary.hpp"
#include "ExitCodes.hpp"
#include "Quote.hpp"

using namespace gemmtune;

namespace {

// CLI11's messages repeat the offending argument whole: escape it and keep the line short.
std::string shortened(const std::string& message) {
  constexpr std::size_t kMax = 300;
  std::string out = escapedControls(message);
  if (out.size() > kMax) out = out.substr(0, kMax) + "…";
  return out;
}

void setupLogging(int verbosity) {
  auto logger = spdlog::stderr_color_mt("gemmtune");
  logger->set_pattern("gemmtune: %^%l%$: %v");
  logger->set_level(verbosity > 0 ? spdlog::level::debug : verbosity < 0 ? spdlog::level::warn : spdlog::level::info);
  spdlog::set_default_logger(logger);
}

// Every command's output goes through stdout: a full disk or a closed pipe must not look like
// success (issue 13, defect 4). Flushing here covers printf, fmt::print and std::cout alike.
int checkedStdout(int code) {
  std::cout.flush();
  bool failed = !std::cout.good() || std::fflush(stdout) != 0 || std::ferror(stdout);
  if (!failed) return code;
  int err = errno;
  std::fprintf(stderr, "gemmtune: error: cannot write to standard output: %s\n", std::strerror(err ? err : EIO));
  return code == kExitOk || code == kExitFailure ? kExitIoError : code;
}

// The options every command takes, before or after its name.
struct GlobalFlags {
  bool verbose = false, quiet = false;
};

void addGlobalOptions(CLI::App& app, cli::CliContext& ctx, GlobalFlags& flags) {
  app.add_flag("-v,--verbose", flags.verbose, "Log debug details to stderr");
  app.add_flag("-q,--quiet", flags.quiet, "Log only warnings and errors");
  app.add_option("--templates-dir", ctx.templatesDir, "Read kernel templates from DIR instead of the embedded copies")
      ->check(CLI::ExistingDirectory)->type_name("DIR");
  app.add_option("--cache-dir", ctx.cacheDir, "Compile cache directory (default $XDG_CACHE_HOME/gemmtune)")
      ->type_name("DIR");
  app.add_flag("--no-cache", ctx.noCache, "Do not read or write the compile cache");
  app.add_option("-j,--jobs", ctx.jobs, "Parallel NVRTC compiles (default: hardware threads)")
      ->check(CLI::Range(1, 1024));
}

// Adds every subcommand; returns what each one runs.
std::map<CLI::App*, cli::Action> addCommands(CLI::App& app, cli::CliContext& ctx) {
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
  reg(cli::addSeenCommand);
  reg(cli::addExportCommand);
  reg(cli::addImportCommand);
  reg(cli::addDbCommand);
  reg(cli::addSpaceCommand);
  reg(cli::addGpusCommand);
  reg(cli::addReportCommand);
  reg(cli::addWorkerCommand);
  reg(cli::addCompileUnitCommand);
  return actions;
}

// CLI11 would report an unknown command as "a subcommand is required"; name it instead.
// True when it was reported.
bool reportedUnknownCommand(CLI::App& app, int argc, char** argv) {
  auto isCommand = [&](const char* word) {
    for (auto* sub : app.get_subcommands({}))
      if (sub->check_name(word)) return true;
    return false;
  };
  if (argc <= 1 || argv[1][0] == '-' || isCommand(argv[1])) return false;
  std::string names;
  for (auto* sub : app.get_subcommands({}))
    if (!sub->get_group().empty()) names += (names.empty() ? "" : ", ") + sub->get_name();
  std::fprintf(stderr, "gemmtune: error: unknown command %s (choose from: %s)\n", quoteInput(argv[1]).c_str(),
               names.c_str());
  return true;
}

// The exit code when parsing ends the program (help, version, a usage error), else nothing.
std::optional<int> parseArguments(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return checkedStdout(app.exit(e));
  } catch (const CLI::CallForAllHelp& e) {
    return checkedStdout(app.exit(e));
  } catch (const CLI::CallForVersion& e) {
    return checkedStdout(app.exit(e));
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "gemmtune: error: %s (see gemmtune --help)\n", shortened(e.what()).c_str());
    return kExitUsage;
  }
  return std::nullopt;
}

// Runs the chosen command; its errors become one logged line and their exit code.
int runCommand(const CLI::App& app, const std::map<CLI::App*, cli::Action>& actions) {
  int code = kExitUsage;
  try {
    for (auto* sub : app.get_subcommands())
      if (auto it = actions.find(sub); it != actions.end()) {
        code = it->second();
        break;
      }
  } catch (const Error& e) {
    spdlog::error("{}", escapedControls(e.what()));
    code = exitCodeOf(e);
  } catch (const std::system_error& e) {
    // fmt::print throws this when stdout fails mid-way (a full disk, a closed pipe): I/O.
    spdlog::error("{}", escapedControls(e.what()));
    code = kExitIoError;
  } catch (const std::exception& e) {
    spdlog::error("{}", escapedControls(e.what()));
    code = kExitFailure;
  }
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gemmtune: find the fastest SGEMM kernel configuration for your GPU and sizes.\n"
               "Kernel templates are instantiated per configuration, compiled with NVRTC, filtered by\n"
               "the GPU's limits, verified against cuBLAS, timed, and the best kept in SQLite.",
               "gemmtune"};
  app.require_subcommand(1);
  app.fallthrough();  // global options may follow the subcommand
  // The NVRTC in use too: which one compiles the kernels changes their speed (NvrtcLibrary).
  app.set_version_flag("--version", [] { return "gemmtune 0.1.0\n" + NvrtcLibrary::describeInUse(); });

  cli::CliContext ctx;
  ctx.self = argv[0];
  for (int i = 0; i < argc; ++i) ctx.commandLine += (i ? " " : "") + std::string(argv[i]);
  GlobalFlags flags;
  addGlobalOptions(app, ctx, flags);
  const std::map<CLI::App*, cli::Action> actions = addCommands(app, ctx);
  if (reportedUnknownCommand(app, argc, argv)) return kExitUsage;
  if (auto code = parseArguments(app, argc, argv)) return *code;

  setupLogging(flags.verbose ? 1 : flags.quiet ? -1 : 0);
  serving::setAutoGpuDetector([](std::string_view selector) { return resolveGpu(selector); });
  return checkedStdout(runCommand(app, actions));
}
