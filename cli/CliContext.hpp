// CliContext: options shared by every subcommand, and the registration hook each subcommand
// file provides (one file per subcommand: cli/<Name>Command.cpp).
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <functional>
#include <string>

#include "Compiler.hpp"
#include "DbPath.hpp"

namespace gemmtune::cli {

struct CliContext {
  std::filesystem::path templatesDir;  // --templates-dir
  std::filesystem::path cacheDir = CompileCache::defaultDir();
  bool noCache = false;
  int jobs = 0;
  std::string self;         // argv[0]: the worker process re-executes this binary
  std::string commandLine;  // as typed, recorded with each tuning run

  CompilerOptions compilerOptions() const {
    // Compiles run in child processes of this very program (`compile-unit`): they scale with
    // cores where NVRTC's threads do not; without a disk cache they run on threads.
    return {templatesDir, noCache ? std::filesystem::path{} : cacheDir, jobs, "/proc/self/exe"};
  }
};

// --db PATH, the same for every subcommand that reads or writes the results database.
inline CLI::Option* addDbOption(CLI::App* sub, std::string& path) {
  return sub->add_option("--db", path, db::kDbOptionHelp)->type_name("PATH");
}

// For options where an empty value would silently mean "not given" (--size ''): refused (2).
inline const CLI::Validator nonEmpty{[](std::string& value) { return value.empty() ? std::string("must not be empty") : std::string(); },
                                     "", "NONEMPTY"};

// A subcommand's body; returns the process exit code.
using Action = std::function<int()>;

// Each registers its subcommand on `app` and returns the action to run when it is chosen.
Action addPtxCommand(CLI::App& app, CliContext& ctx);
Action addTuneCommand(CLI::App& app, CliContext& ctx);
Action addQueryCommand(CLI::App& app, CliContext& ctx);
Action addResultsCommand(CLI::App& app, CliContext& ctx);
Action addSeenCommand(CLI::App& app, CliContext& ctx);
Action addExportCommand(CLI::App& app, CliContext& ctx);
Action addImportCommand(CLI::App& app, CliContext& ctx);
Action addDbCommand(CLI::App& app, CliContext& ctx);
Action addSpaceCommand(CLI::App& app, CliContext& ctx);
Action addGpusCommand(CLI::App& app, CliContext& ctx);
Action addReportCommand(CLI::App& app, CliContext& ctx);
Action addWorkerCommand(CLI::App& app, CliContext& ctx);  // hidden: the GPU worker process
Action addCompileUnitCommand(CLI::App& app, CliContext& ctx);  // hidden: one NVRTC compile

}  // namespace gemmtune::cli
