// `gemmtune space`: a family's candidate space for one GPU, each configuration with its status
// and the numbers behind it — what the tuner would time, and why the rest would not be.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "FamilyHelp.hpp"
#include "CandidateSpace.hpp"
#include "SizeSpec.hpp"
#include "CliContext.hpp"
#include "FamilyRegistry.hpp"
#include "GpuDetect.hpp"
#include "GpuSpecJson.hpp"
#include "NvrtcCompiler.hpp"
#include "ExitCodes.hpp"

namespace gemmtune::cli {

namespace {

struct SpaceArgs {
  std::string gpu = "auto", family, size, params, layout = "nn", batch = "1";
  bool all = false, json = false, acceptedOnly = false, rejectSpills = false, prune = false;
};

std::string dash(bool known, const std::string& value) { return known ? value : "-"; }


struct Row {
  std::string instance, threads, regs, smem, optIn, blocks, warps, occupancy, limiter, status;
};

Row rowOf(const Candidate& c) {
  const bool compiled = c.compiled && c.compiled->ok;
  const bool geometry = c.stage != CandidateStage::Static;
  Row r;
  r.instance = c.config.name();
  r.threads = dash(geometry, std::to_string(c.threadsPerBlock));
  r.regs = dash(compiled, compiled ? std::to_string(c.compiled->resources.registers) : "");
  r.smem = dash(geometry, std::to_string(c.smemBytes()));
  r.optIn = geometry && c.smemOptIn ? "yes" : "";
  if (c.occupancy) {
    r.blocks = std::to_string(c.occupancy->blocksPerSm);
    r.warps = fmt::format("{}/{}", c.occupancy->activeWarps, c.occupancy->maxWarpsPerSm);
    r.occupancy = fmt::format("{:.1f}%", 100.0 * c.occupancy->fraction);
    r.limiter = c.occupancy->limiterNames();
  } else {
    r.blocks = r.warps = r.occupancy = r.limiter = "-";
  }
  r.status = c.describe() + (c.note.empty() ? "" : "; " + c.note);
  return r;
}

void printTable(const std::vector<Row>& rows) {
  const Row header{"instance", "threads", "regs", "smem B", "opt-in", "blk/SM", "warps", "occ", "limiter", "status"};
  auto fields = [](const Row& r) {
    return std::array<const std::string*, 10>{&r.instance, &r.threads, &r.regs, &r.smem, &r.optIn,
                                              &r.blocks, &r.warps, &r.occupancy, &r.limiter, &r.status};
  };
  std::array<size_t, 10> width{};
  auto widen = [&](const Row& r) {
    auto f = fields(r);
    for (size_t i = 0; i < f.size(); ++i) width[i] = std::max(width[i], f[i]->size());
  };
  widen(header);
  for (const auto& r : rows) widen(r);
  auto print = [&](const Row& r) {
    auto f = fields(r);
    std::string line = fmt::format("{:<{}}", *f[0], width[0]);
    // Numbers right-aligned; the limiter and the status (last, unpadded) read left to right.
    for (size_t i = 1; i < 8; ++i) line += fmt::format("  {:>{}}", *f[i], width[i]);
    line += fmt::format("  {:<{}}  {}", *f[8], width[8], *f[9]);
    fmt::print("{}\n", line);
  };
  print(header);
  for (const auto& r : rows) print(r);
}

nlohmann::json candidateJson(const Candidate& c) {
  nlohmann::json j = {{"instance", c.config.name()}, {"guarded", c.config.guarded}, {"status", c.status()},
                      {"reason", c.reason}, {"note", c.note}};
  if (c.stage != CandidateStage::Static) {
    j["threads_per_block"] = c.threadsPerBlock;
    j["static_smem_bytes"] = c.staticSmemBytes;
    j["dynamic_smem_bytes"] = c.dynamicSmemBytes;
    j["smem_opt_in"] = c.smemOptIn;
  }
  if (c.grid) j["grid"] = {c.grid->x, c.grid->y, c.grid->z};
  if (c.compiled && c.compiled->ok) {
    const Resources& r = c.compiled->resources;
    j["registers"] = r.registers;
    j["spill_store_bytes"] = r.spillStoreBytes;
    j["spill_load_bytes"] = r.spillLoadBytes;
    j["stack_frame_bytes"] = r.stackFrameBytes;
  }
  if (c.occupancy) {
    const Occupancy& o = *c.occupancy;
    auto bound = [](int n) { return n >= Occupancy::kUnlimited ? nlohmann::json(nullptr) : nlohmann::json(n); };
    j["occupancy"] = {{"blocks_per_sm", o.blocksPerSm},
                      {"active_warps", o.activeWarps},
                      {"max_warps", o.maxWarpsPerSm},
                      {"fraction", o.fraction},
                      {"limiters", o.limiterNames()},
                      {"blocks_by", {{"threads", bound(o.blocksByThreads)}, {"registers", bound(o.blocksByRegisters)},
                                     {"smem", bound(o.blocksBySharedMemory)}, {"blocks", bound(o.blocksByBlockLimit)}}},
                      {"registers_per_block_allocated", o.registersPerBlock},
                      {"smem_per_block_allocated", o.smemPerBlock}};
  }
  return j;
}

int run(const SpaceArgs& a, const CliContext& ctx) {
  const auto& registry = FamilyRegistry::builtin();
  if (a.family.empty()) throw UsageError(fmt::format("give --family (choose from: {})", registry.choices()));
  const Family& family = registry.get(a.family);
  SpaceOptions options;
  options.layout = parseLayout(a.layout);
  if (!a.size.empty()) {
    options.size = parseOneSize(a.size);
    options.size->layout = options.layout;
    options.size->batch = parseBatch(a.batch);
  } else if (a.batch != "1") {
    throw UsageError("--batch needs --size: a batch changes the launch, which only a size decides");
  }
  options.bothForms = a.all;
  options.domains = parseParamDomains(family, a.params);
  options.filter.rejectSpills = a.rejectSpills;
  options.filter.prune = a.prune;
  if (a.prune && !options.size) throw UsageError("--prune needs --size: its rules depend on the problem size");
  const GpuSpec gpu = resolveGpu(a.gpu);
  NvrtcCompiler::checkArch(gpu.arch());

  std::vector<Candidate> candidates = screenSpace(family, gpu, options);
  Compiler compiler(ctx.compilerOptions());
  spdlog::debug("compiling the survivors for {} on {} threads", gpu.arch(), compiler.jobs());
  compileSpace(candidates, gpu, compiler, options);
  const SpaceSummary summary = SpaceSummary::of(candidates);

  if (a.json) {
    nlohmann::json j = {{"gpu", toJson(gpu)}, {"family", family.name}, {"candidates", nlohmann::json::array()},
                        {"summary", {{"enumerated", summary.enumerated}, {"statically_rejected", summary.staticallyRejected},
                                     {"compiled", summary.compiled}, {"compile_errors", summary.compileErrors},
                                     {"rejected_after_compile", summary.rejectedAfterCompile},
                                     {"pruned", summary.pruned}, {"accepted", summary.accepted}}}};
    j["size"] = options.size ? nlohmann::json{{"M", options.size->M}, {"N", options.size->N}, {"K", options.size->K},
                                              {"batch", options.size->batch}}
                             : nlohmann::json(nullptr);
    j["layout"] = options.layout.text();
    for (const auto& c : candidates)
      if (!a.acceptedOnly || c.accepted()) j["candidates"].push_back(candidateJson(c));
    fmt::print("{}\n", j.dump(2));
    return kExitOk;
  }
  fmt::print("{} on {} ({}{}, {} SMs){}\n", family.name, gpu.name, gpu.profile.empty() ? "" : "profile " + gpu.profile + ", ",
             gpu.arch(), gpu.smCount,
             options.size ? ", size " + options.size->str()
                          : ", any size (guarded forms)" + (options.layout != Layout{} ? ", layout " + options.layout.text() : ""));
  std::vector<Row> rows;
  for (const auto& c : candidates)
    if (!a.acceptedOnly || c.accepted()) rows.push_back(rowOf(c));
  printTable(rows);
  fmt::print("{}\n", summary.line());
  return kExitOk;
}

}  // namespace

Action addSpaceCommand(CLI::App& app, CliContext& ctx) {
  auto a = std::make_shared<SpaceArgs>();
  auto* sub = app.add_subcommand("space", "List a family's candidates for a GPU: status, reason, resources, occupancy");
  sub->add_option("--gpu", a->gpu, "auto, a device index, or an offline profile (see `gemmtune gpus`)")
      ->capture_default_str();
  sub->add_option("--family", a->family, "Kernel family (" + familyChoices() + ")");
  sub->add_option("--size", a->size, "Problem size N or MxNxK: picks unguarded forms where the tiles divide it")
      ->check(nonEmpty);
  sub->add_option("--params", a->params, "Use these values instead of some parameters' domains, e.g. BM=64,TM=4/8");
  sub->add_option("--layout", a->layout, "How the kernels read A and B: nn, nt, tn or tt (op(A) then op(B))")
      ->capture_default_str();
  sub->add_option("--batch", a->batch, "With --size: independent products per call (the launch's grid z)")
      ->type_name("N")
      ->capture_default_str();
  sub->add_flag("--all", a->all, "List both the guarded and the unguarded form of every configuration");
  sub->add_flag("--accepted", a->acceptedOnly, "Show only the candidates left to time (the summary still counts all)");
  sub->add_flag("--reject-spills", a->rejectSpills, "Reject candidates that spill registers (default: keep, flagged)");
  sub->add_flag("--prune", a->prune, "Apply analytic pruning (needs --size), shown as pruned:<rule>");
  sub->add_flag("--json", a->json, "Machine-readable output");
  sub->footer(fmt::format(
      "Shared memory above the 48 KiB default is fine up to the GPU's opt-in maximum: the launcher opts\n"
      "in. Spilling candidates are kept and flagged (timing decides) unless --reject-spills.\n"
      "Examples:\n"
      "  gemmtune space --gpu h100 --family {0} --size 4096\n"
      "  gemmtune space --gpu t4 --family {0} --params {1} --accepted\n"
      "  gemmtune space --gpu a6000 --family {0} --size 1000 --all --json\n"
      "  gemmtune space --gpu h100 --family {0} --size 512 --layout tn --batch 64",
      exampleFamily(), exampleFirstParam()));
  return [a, &ctx] { return run(*a, ctx); };
}

}  // namespace gemmtune::cli
