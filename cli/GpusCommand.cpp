// `gemmtune gpus`: the NVRTC in use, the GPUs gemmtune can see and the offline profiles it can
// plan for, with every limit the filters and the occupancy calculator use.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>

#include "CliContext.hpp"
#include "CudaDriver.hpp"
#include "GpuDetect.hpp"
#include "GpuProfiles.hpp"
#include "GpuSpecJson.hpp"
#include "NvrtcLibrary.hpp"
#include "ExitCodes.hpp"

namespace gemmtune::cli {

namespace {

struct Column {
  std::string key;  // "gpu0", "h100"
  GpuSpec spec;
};

std::string kib(long long bytes) {
  return bytes % 1024 == 0 ? fmt::format("{} KiB", bytes / 1024) : fmt::format("{} B", bytes);
}

std::string dim(int n) { return n == 2147483647 ? "2^31-1" : std::to_string(n); }

// One row per limit, one column per GPU: eight profiles side by side stay readable.
void printTable(const std::vector<Column>& cols) {
  using Row = std::pair<std::string, std::function<std::string(const GpuSpec&)>>;
  const std::vector<Row> rows = {
      {"compute capability", [](const GpuSpec& g) { return fmt::format("{}.{}", g.ccMajor, g.ccMinor); }},
      {"SMs", [](const GpuSpec& g) { return std::to_string(g.smCount); }},
      {"threads / block", [](const GpuSpec& g) { return std::to_string(g.maxThreadsPerBlock); }},
      {"threads / SM", [](const GpuSpec& g) { return std::to_string(g.maxThreadsPerSm); }},
      {"blocks / SM", [](const GpuSpec& g) { return std::to_string(g.maxBlocksPerSm); }},
      {"warp size", [](const GpuSpec& g) { return std::to_string(g.warpSize); }},
      {"registers / SM", [](const GpuSpec& g) { return std::to_string(g.regsPerSm); }},
      {"registers / block", [](const GpuSpec& g) { return std::to_string(g.regsPerBlock); }},
      {"registers / thread", [](const GpuSpec& g) { return std::to_string(g.maxRegsPerThread); }},
      {"register unit / warp", [](const GpuSpec& g) { return std::to_string(g.regAllocUnit); }},
      {"smem / SM", [](const GpuSpec& g) { return kib(g.smemPerSm); }},
      {"smem / block", [](const GpuSpec& g) { return kib(g.smemPerBlock); }},
      {"smem / block opt-in", [](const GpuSpec& g) { return kib(g.smemPerBlockOptin); }},
      {"smem reserved / block", [](const GpuSpec& g) { return kib(g.smemReservedPerBlock); }},
      {"max grid", [](const GpuSpec& g) { return fmt::format("{}x{}x{}", dim(g.maxGridDimX), g.maxGridDimY, g.maxGridDimZ); }},
      {"L2", [](const GpuSpec& g) { return fmt::format("{} MiB", g.l2Bytes / (1024 * 1024)); }},
      {"memory", [](const GpuSpec& g) { return fmt::format("{:.1f} GiB", g.totalMemBytes / 1073741824.0); }},
      {"memory clock", [](const GpuSpec& g) { return fmt::format("{} MHz", g.memClockKhz / 1000); }},
      {"memory bus", [](const GpuSpec& g) { return fmt::format("{} bit", g.memBusWidthBits); }},
      {"SM clock", [](const GpuSpec& g) { return fmt::format("{} MHz", g.clockKhz / 1000); }},
  };
  size_t label = 0;
  for (const auto& r : rows) label = std::max(label, r.first.size());
  std::vector<size_t> width;
  for (const auto& c : cols) {
    size_t w = c.key.size();
    for (const auto& r : rows) w = std::max(w, r.second(c.spec).size());
    width.push_back(w);
  }
  fmt::print("{:<{}}", "", label);
  for (size_t i = 0; i < cols.size(); ++i) fmt::print("  {:>{}}", cols[i].key, width[i]);
  fmt::print("\n");
  for (const auto& r : rows) {
    fmt::print("{:<{}}", r.first, label);
    for (size_t i = 0; i < cols.size(); ++i) fmt::print("  {:>{}}", r.second(cols[i].spec), width[i]);
    fmt::print("\n");
  }
}

std::string driverProblem() {
  try {
    CudaDriver::get();
    cudaDeviceCount();
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

int run(bool json) {
  const std::vector<GpuSpec> detected = detectGpus();
  const std::string problem = detected.empty() ? driverProblem() : "";
  if (json) {
    nlohmann::json j = {{"detected", nlohmann::json::array()}, {"profiles", nlohmann::json::array()}};
    for (const auto& g : detected) j["detected"].push_back(toJson(g));
    if (!problem.empty()) j["detect_error"] = problem;
    try {
      const auto& nvrtc = NvrtcLibrary::get();
      j["nvrtc"] = {{"version", nvrtc.version()}, {"path", nvrtc.path()}, {"origin", nvrtc.origin()},
                    {"pinned", nvrtc.pinned()}};
    } catch (const Error& e) {
      j["nvrtc_error"] = e.what();
    }
    for (const auto& p : gpuProfiles()) {
      nlohmann::json pj = toJson(p.spec);
      pj["source"] = p.source;
      j["profiles"].push_back(std::move(pj));
    }
    fmt::print("{}\n", j.dump(2));
    return kExitOk;
  }
  std::vector<Column> cols;
  fmt::print("{}\n", NvrtcLibrary::describeInUse());
  if (detected.empty()) {
    fmt::print("Detected GPUs: none ({})\n", problem);
  } else {
    fmt::print("Detected GPUs (--gpu N, or --gpu auto for gpu0):\n");
    for (const auto& g : detected) {
      fmt::print("  gpu{}  {}  {}\n", g.deviceIndex, g.name, g.uuid);
      cols.push_back({fmt::format("gpu{}", g.deviceIndex), g});
    }
  }
  fmt::print("Offline profiles (--gpu NAME):\n");
  for (const auto& p : gpuProfiles()) {
    fmt::print("  {:<8} {}\n", p.key, p.spec.name);
    cols.push_back({p.key, p.spec});
  }
  fmt::print("\n");
  printTable(cols);
  fmt::print("\nSources:\n");
  for (const auto& p : gpuProfiles()) fmt::print("  {:<8} {}\n", p.key, p.source);
  return kExitOk;
}

}  // namespace

Action addGpusCommand(CLI::App& app, CliContext&) {
  auto json = std::make_shared<bool>(false);
  auto* sub = app.add_subcommand("gpus", "List detected GPUs and the offline profiles, with their limits");
  sub->add_flag("--json", *json, "Machine-readable output");
  sub->footer(
      "Detected GPUs come from the CUDA driver (none without one); offline profiles let `space` and\n"
      "the filters plan for a GPU you do not have.\n"
      "Examples:\n"
      "  gemmtune gpus\n"
      "  gemmtune gpus --json | jq '.profiles[] | {profile, smem_per_block_optin_bytes}'");
  return [json] { return run(*json); };
}

}  // namespace gemmtune::cli
