// `gemmtune ptx`: show what NVRTC makes of one configuration — PTX, CUBIN, SASS, resources and
// the instruction mix.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <optional>
#include <nlohmann/json.hpp>

#include "FamilyHelp.hpp"
#include "CliContext.hpp"
#include "CubinInfo.hpp"
#include "FamilyRegistry.hpp"
#include "GpuDetect.hpp"
#include "NvrtcCompiler.hpp"
#include "PtxStats.hpp"
#include "SizeSpec.hpp"
#include "SassTool.hpp"
#include "ExitCodes.hpp"
#include "OutputFile.hpp"

namespace gemmtune::cli {

namespace {

struct PtxArgs {
  std::string instance, family, params, arch, outDir, layout;
  bool guarded = false, stats = false, sass = false, json = false;
};

// The configuration asked for: an instance name, or --family with --params.
Config configOf(const PtxArgs& a) {
  const auto& reg = FamilyRegistry::builtin();
  if (!a.instance.empty()) {
    if (!a.family.empty() || !a.params.empty())
      throw UsageError("give either an instance name or --family/--params, not both");
    if (!a.layout.empty())
      throw UsageError("an instance name carries its layout (e.g. ..._tn): --layout goes with --family/--params");
    return reg.parseName(a.instance);
  }
  if (a.family.empty()) throw UsageError(fmt::format("give an instance name or --family (choose from: {})", reg.choices()));
  Config config = reg.parseParams(reg.get(a.family), a.params, a.guarded);
  if (!a.layout.empty()) config.layout = parseLayout(a.layout);
  return config;
}

void writeOutputs(const std::string& outDir, const Config& config, const std::string& arch, const CompileResult& r) {
  std::filesystem::path dir(outDir);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw IoError(fmt::format("cannot create {}: {}", dir.string(), ec.message()));
  writeOutputFile(dir / (config.name() + "." + arch + ".ptx"), r.ptx, "the PTX");
  writeOutputFile(dir / (config.name() + "." + arch + ".cubin"), r.cubin, "the CUBIN");
  spdlog::info("wrote {}.{}.ptx and .cubin to {}", config.name(), arch, dir.string());
}

// What one compile made: the configuration, its target and NVRTC's result, with the PTX's
// instruction counts and the register count the CUBIN states.
struct Compiled {
  const Config& config;
  const std::string& arch;
  const CompileResult& r;
  PtxStats st;
  std::optional<CubinKernelInfo> cubinInfo;
};

nlohmann::json resourcesJson(const Compiled& c) {
  const Family& f = *c.config.family;
  const PtxStats& st = c.st;
  return {{"instance", c.config.name()}, {"arch", c.arch}, {"lowered_name", c.r.loweredName},
          {"threads_per_block", f.threadsPerBlock(c.config)},
          {"registers", c.r.resources.registers},
          {"cubin_registers", c.cubinInfo ? c.cubinInfo->registers : -1},
          {"static_smem_bytes", c.r.resources.staticSmemBytes},
          {"dynamic_smem_bytes", f.dynamicSmemBytes(c.config)},
          {"stack_frame_bytes", c.r.resources.stackFrameBytes},
          {"spill_store_bytes", c.r.resources.spillStoreBytes},
          {"spill_load_bytes", c.r.resources.spillLoadBytes},
          {"instructions", {{"ld.global", st.ldGlobal}, {"st.global", st.stGlobal},
                            {"ld.shared", st.ldShared}, {"st.shared", st.stShared},
                            {"fma.rn.f32", st.fma}, {"bar.sync", st.barSync}, {"total", st.total}}},
          {"fma_per_shared_load", st.fmaPerSharedLoad()}};
}

void printStats(const Compiled& c) {
  const Family& f = *c.config.family;
  const PtxStats& st = c.st;
  auto row = [](std::string_view k, const std::string& v) { fmt::print("{:<22}{}\n", k, v); };
  row("instance", c.config.name());
  row("arch", c.arch);
  row("kernel", c.r.loweredName);
  row("threads per block", std::to_string(f.threadsPerBlock(c.config)));
  row("registers", fmt::format("{} (cubin .nv.info: {})", c.r.resources.registers, c.cubinInfo ? c.cubinInfo->registers : -1));
  row("static smem", fmt::format("{} B", c.r.resources.staticSmemBytes));
  row("dynamic smem", fmt::format("{} B", f.dynamicSmemBytes(c.config)));
  row("stack frame", fmt::format("{} B", c.r.resources.stackFrameBytes));
  row("spills", fmt::format("{} B stored, {} B loaded", c.r.resources.spillStoreBytes, c.r.resources.spillLoadBytes));
  fmt::print("\ninstruction mix (static count in PTX)\n");
  row("  ld.global", std::to_string(st.ldGlobal));
  row("  st.global", std::to_string(st.stGlobal));
  row("  ld.shared", std::to_string(st.ldShared));
  row("  st.shared", std::to_string(st.stShared));
  row("  fma.rn.f32", std::to_string(st.fma));
  row("  bar.sync", std::to_string(st.barSync));
  row("  FMAs per ld.shared", fmt::format("{:.2f}", st.fmaPerSharedLoad()));
}

int run(const PtxArgs& a, const CliContext& ctx) {
  Config config = configOf(a);
  std::string arch = a.arch.empty() ? defaultArch() : a.arch;
  NvrtcCompiler::checkArch(arch);
  if (const Family& f = *config.family; !f.runsOn(arch))
    throw UsageError(fmt::format("{} runs on {} GPUs only (its code is compiled for {}): use --arch {}", f.name,
                                 f.onlyGpuArch(), f.onlyArch, f.onlyGpuArch()));

  const std::string target = config.compileArch(arch);  // sm_90a for a family that only runs there

  Compiler compiler(ctx.compilerOptions());
  CompileResult r = compiler.compile(config, arch);
  if (!r.ok) {
    std::fprintf(stderr, "%s\n", r.log.c_str());
    throw UsageError(fmt::format("{} failed to compile for {} (log above)", config.name(), target));
  }
  spdlog::debug("{} compiled for {}{}", config.name(), target, r.fromCache ? " (cached)" : "");

  if (!a.outDir.empty()) writeOutputs(a.outDir, config, target, r);

  std::string sass;
  if (a.sass) sass = disassemble(r.cubin);  // throws with a clear message when no tool exists

  const Compiled compiled{config, target, r, countPtx(r.ptx), readCubinKernelInfo(r.cubin, r.loweredName)};
  if (a.json) {
    nlohmann::json j = resourcesJson(compiled);
    if (!a.stats) j["ptx"] = r.ptx;
    if (a.sass) j["sass"] = sass;
    fmt::print("{}\n", j.dump(2));
    return kExitOk;
  }
  if (a.stats) {
    printStats(compiled);
  } else if (!a.sass && a.outDir.empty()) {
    fmt::print("{}", r.ptx);
  }
  if (a.sass) fmt::print("{}", sass);
  return kExitOk;
}

}  // namespace

Action addPtxCommand(CLI::App& app, CliContext& ctx) {
  auto a = std::make_shared<PtxArgs>();
  auto* sub = app.add_subcommand("ptx", "Compile one configuration and show its PTX, SASS or resources");
  sub->add_option("instance,--instance", a->instance,
                  "Canonical instance name, e.g. " + exampleConfig().name() + " (a layout other than nn in it: ..._tn)");
  sub->add_option("--family", a->family, "Kernel family (" + familyChoices() + ")");
  sub->add_option("--params", a->params, "Parameter values, e.g. BM=64,BN=64,BK=8,TM=8");
  sub->add_flag("--guarded", a->guarded, "With --family: the bounds-checked form (any M, N, K)");
  sub->add_option("--layout", a->layout, "With --family: how the kernel reads A and B, nn (default), nt, tn or tt");
  sub->add_option("--arch", a->arch, "Compile target sm_XY (default: the detected GPU, else sm_90)");
  sub->add_option("-o,--out-dir", a->outDir, "Write <instance>.<arch>.ptx and .cubin into DIR")->type_name("DIR");
  sub->add_flag("--stats", a->stats, "Print registers, shared memory, spills and the instruction mix");
  sub->add_flag("--sass", a->sass, "Print SASS (needs cuobjdump or nvdisasm)");
  sub->add_flag("--json", a->json, "Machine-readable output");
  Config guarded = exampleConfig();
  guarded.guarded = true;
  sub->footer(fmt::format("Examples:\n"
                          "  gemmtune ptx --family {} --params {} --arch sm_90 --stats\n"
                          "  gemmtune ptx --family {} --params {} --layout tn --stats\n"
                          "  gemmtune ptx {} -o kernels/\n"
                          "  gemmtune ptx {} --sass",
                          exampleFamily(), exampleParams(), exampleFamily(), exampleParams(), exampleConfig().name(),
                          guarded.name()));
  return [a, &ctx] { return run(*a, ctx); };
}

}  // namespace gemmtune::cli
